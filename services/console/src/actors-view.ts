import type { InsightSource } from './insight-view.js';

/**
 * Which persons a chart point or table cell stands for, as the ActorsQuery that lists them: the
 * insight's own query as its source, and the point in PostHog's terms (a day, a series, a
 * breakdown value, a lifecycle status, a stickiness count, a funnel step, a retention cohort).
 * `series` and `point` index the drawn view, whose series follow the results in order.
 * Pure, so the mapping is tested without a browser; null where a point has no persons of its own.
 */
export const ACTORS_PAGE = 25;

interface Result {
  action?: { order?: number } | null;
  days?: (string | number)[];
  breakdown_value?: unknown;
  compare_label?: string;
  status?: string;
}

const TOTAL_DISPLAYS = new Set(['ActionsBarValue', 'ActionsPie', 'BoldNumber', 'ActionsTable']);

export function actorsQueryOf(source: InsightSource & { trendsFilter?: { display?: string; formula?: string | null } }, results: unknown, series: number, point: number): object | null {
  if (!Array.isArray(results)) return null;
  const actors = (from: object) => ({ kind: 'ActorsQuery', source: from, limit: ACTORS_PAGE, offset: 0 });
  const insight = (fields: object) => actors({ kind: 'InsightActorsQuery', source, ...fields });
  switch (source.kind) {
    case 'TrendsQuery': {
      if (source.trendsFilter?.formula) return null;
      const total = TOTAL_DISPLAYS.has(source.trendsFilter?.display ?? '');
      const r = results[total ? point : series] as Result | undefined;
      const day = total ? undefined : r?.days?.[point];
      if (!r || (!total && day === undefined)) return null;
      return insight({
        series: r.action?.order ?? 0,
        ...(day !== undefined && { day }),
        ...(r.breakdown_value !== undefined && { breakdown: r.breakdown_value }),
        ...(r.compare_label && { compare: r.compare_label }),
      });
    }
    case 'StickinessQuery': {
      const r = results[series] as Result | undefined;
      return r ? insight({ series: r.action?.order ?? 0, day: point + 1 }) : null;
    }
    case 'LifecycleQuery': {
      const r = results[series] as Result | undefined;
      const day = r?.days?.[point];
      return r?.status && day !== undefined ? insight({ status: r.status, day }) : null;
    }
    case 'RetentionQuery':
      return series < results.length ? insight({ interval: series }) : null;
    case 'FunnelsQuery': {
      const groups = Array.isArray(results[0]) ? (results as Result[][]) : [results as Result[]];
      const group = groups[series];
      if (!group?.[point]) return null;
      const value = groups.length > 1 ? group[0]?.breakdown_value : undefined;
      return actors({ kind: 'FunnelsActorsQuery', source, funnelStep: point + 1, ...(value !== undefined && { funnelStepBreakdown: value }) });
    }
    default:
      return null;
  }
}

export interface ActorRow {
  id: string;
  name: string;
  distinctIds: string;
  events: number | null;
}

/** A page of the ActorsQuery's answer as the list shows it: a person's email or name, else a distinct id. */
export function actorRows(answer: { columns?: string[]; results?: unknown[][] }): ActorRow[] {
  const columns = answer.columns ?? [];
  const actor = columns.indexOf('actor');
  const events = columns.indexOf('event_count');
  return (answer.results ?? []).map((row) => {
    const person = (row[actor] ?? {}) as { id?: string; distinct_ids?: string[]; properties?: Record<string, unknown> };
    const ids = person.distinct_ids ?? [];
    const props = person.properties ?? {};
    const name = [props.email, props.name].find((v) => typeof v === 'string' && v !== '') as string | undefined;
    return { id: String(person.id ?? ''), name: name ?? ids[0] ?? String(person.id ?? ''), distinctIds: ids.join(', '), events: events >= 0 ? Number(row[events]) : null };
  });
}
