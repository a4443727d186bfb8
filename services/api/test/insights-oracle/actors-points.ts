import { CASES, NY, ZONED, type Request, type Zone } from './cases.js';

/**
 * The points of an insight's answer, each as the ActorsQuery source that opens it and the number
 * the insight shows there: the persons behind a point must be exactly as many (for a count of
 * events, their events must add up to it).
 */
export interface Point {
  label: string;
  source: object;
  /** The persons the point counts, or (`events`) the events it counts. */
  expected: { persons: number } | { events: number };
  /** Retention: how many of the cohort's persons count at each later interval. */
  appearances?: number[];
}

/** Maths whose number is a count of persons, or of events; other maths count something persons do not add up to. */
const PERSON_MATHS = new Set(['dau', 'weekly_active', 'monthly_active']);
const countedBy = (request: any): 'persons' | 'events' | null => {
  const maths = new Set<string>(request.series.map((s: { math?: string }) => s.math ?? 'total'));
  if ([...maths].every((m) => PERSON_MATHS.has(m))) return 'persons';
  return [...maths].every((m) => m === 'total') ? 'events' : null;
};

/**
 * The oracle's cases whose every point has a number persons make up: no formulas, no property or
 * group maths. The twenty-step funnels are left out: their steps' persons come from the same
 * per-person query as the short funnels', and forty of them take minutes on 18.16.
 */
export const ACTOR_CASES: [string, Request][] = CASES.filter(([, request]) => {
  if (request.kind === 'FunnelsQuery') return request.series.length <= 5;
  if (request.kind !== 'TrendsQuery') return true;
  return !(request as any).trendsFilter?.formula && countedBy(request) !== null;
});

/** The cases in UTC, and those the oracle asks in America/New_York too, whose edges are local midnights. */
export const ACTOR_TABLE: [string, Zone, Request][] = [
  ...ACTOR_CASES.map(([name, request]): [string, Zone, Request] => [name, 'UTC', request]),
  ...ACTOR_CASES.filter(([name]) => ZONED.has(name)).map(([name, request]): [string, Zone, Request] => [name, NY, request]),
];

export function pointsOf(request: Request, results: any[]): Point[] {
  const points: Point[] = [];
  switch (request.kind) {
    case 'TrendsQuery': {
      const counted = countedBy(request)!;
      for (const r of results) {
        const base = { kind: 'InsightActorsQuery', source: request, series: r.action.order, ...(r.compare_label && { compare: r.compare_label }), ...(r.breakdown_value !== undefined && { breakdown: r.breakdown_value }) };
        const math = (request as any).series[r.action.order].math ?? 'total';
        const by = PERSON_MATHS.has(math) ? 'persons' : counted;
        const expect = (n: number) => (by === 'persons' ? { persons: n } : { events: n });
        if (r.aggregated_value !== undefined) points.push({ label: `${r.label} ${r.breakdown_value ?? ''} total`, source: base, expected: expect(r.aggregated_value) });
        else r.days.forEach((day: string, i: number) => points.push({ label: `${r.label} ${r.breakdown_value ?? ''} ${r.compare_label ?? ''} ${day}`, source: { ...base, day }, expected: expect(r.data[i]) }));
      }
      return points;
    }
    case 'StickinessQuery':
      for (const r of results) r.data.forEach((n: number, i: number) => points.push({ label: `${r.label} ${i + 1}`, source: { kind: 'InsightActorsQuery', source: request, series: r.action.order, day: i + 1 }, expected: { persons: n } }));
      return points;
    case 'LifecycleQuery':
      for (const r of results) r.data.forEach((n: number, i: number) => points.push({ label: `${r.status} ${r.days[i]}`, source: { kind: 'InsightActorsQuery', source: request, status: r.status, day: r.days[i] }, expected: { persons: Math.abs(n) } }));
      return points;
    case 'RetentionQuery':
      results.forEach((r, cohort) =>
        points.push({ label: r.label, source: { kind: 'InsightActorsQuery', source: request, interval: cohort }, expected: { persons: r.values[0].count }, appearances: r.values.map((v: { count: number }) => v.count) }),
      );
      return points;
    case 'FunnelsQuery': {
      const funnels: any[][] = results.length && Array.isArray(results[0]) ? results : [results];
      for (const steps of funnels) {
        const value = steps[0]?.breakdown_value;
        const base = { kind: 'FunnelsActorsQuery', source: request, ...(value !== undefined && { funnelStepBreakdown: value }) };
        steps.forEach((s: { count: number }, k: number) => {
          points.push({ label: `${value ?? ''} converted ${k + 1}`, source: { ...base, funnelStep: k + 1 }, expected: { persons: s.count } });
          if (k > 0) points.push({ label: `${value ?? ''} dropped ${k + 1}`, source: { ...base, funnelStep: -(k + 1) }, expected: { persons: steps[k - 1].count - s.count } });
        });
      }
      return points;
    }
  }
}

/** What an ActorsQuery answered for a point, in the point's terms; `expectedAt` is what the insight showed there. */
export function observedAt(point: Point, body: { columns: string[]; results: any[][] }): object {
  const column = (name: string) => body.columns.indexOf(name);
  const seen = 'persons' in point.expected ? { persons: body.results.length } : { events: body.results.reduce((sum, row) => sum + Number(row[column('event_count')]), 0) };
  const appearances = point.appearances?.map((_, j) => body.results.filter((row) => row[column('appearances')][j]).length);
  return { point: point.label, ...seen, ...(appearances && { appearances }) };
}

export const expectedAt = (point: Point): object => ({ point: point.label, ...point.expected, ...(point.appearances && { appearances: point.appearances }) });
