import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, type ClickHouse } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';

/**
 * Experiment fixtures as plain data, and the counts PostHog's ExperimentTrendsQuery and
 * ExperimentFunnelsQuery give on them read without ClickHouse: a metric's events count in the
 * variant they were sent under (`$feature/<key>`), exposures are persons with a
 * `$feature_flag_called` of the flag answering a variant, a funnel's persons enter with a first
 * step sent under a variant and belong to the variant of their first such step. Shares no code
 * with what it checks.
 */
export interface FixtureEvent {
  distinctId: string;
  person: string;
  event: string;
  /** `YYYY-MM-DD hh:mm:ss`, UTC. */
  at: string;
  properties?: Record<string, unknown>;
}

export const START = '2024-03-01T00:00:00.000Z';
export const END = '2024-03-31T00:00:00.000Z';
export const VARIANTS = ['control', 'test'];
const hour = (h: number) => new Date(Date.parse('2024-03-02T00:00:00Z') + h * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);

/**
 * 40 persons, each exposed twice at some hour of March, with a purchase before exposure (sent
 * under no variant), views and purchases after it (sent under theirs, some on the pro plan); one who later sends
 * events under the other variant; one exposed only before the start; a person with two distinct
 * ids; an exposure of another flag; events under an unknown variant and after the end.
 */
export function experimentFixture(flagKey: string): FixtureEvent[] {
  const rows: FixtureEvent[] = [];
  const feature = `$feature/${flagKey}`;
  const exposure = (person: string, h: number, variant: string, distinctId = person, flag = flagKey) =>
    rows.push({ distinctId, person, event: '$feature_flag_called', at: hour(h), properties: { $feature_flag: flag, $feature_flag_response: variant, [feature]: variant } });
  const add = (person: string, event: string, h: number, variant: string | null, distinctId = person, properties: Record<string, unknown> = {}) =>
    rows.push({ distinctId, person, event, at: hour(h), properties: variant === null ? properties : { ...properties, [feature]: variant } });
  for (let i = 0; i < 40; i++) {
    const person = `p${i}`;
    const variant = i % 3 === 0 ? 'control' : 'test';
    add(person, 'purchase', 10 * i, null);
    exposure(person, 10 * i + 1, variant);
    exposure(person, 10 * i + 2, variant);
    if (i % 2 === 0) add(person, 'view', 10 * i + 3, variant);
    for (let k = 0; k < i % 4; k++) add(person, 'purchase', 10 * i + 4 + k, variant, person, i % 5 === 0 ? { plan: 'pro' } : {});
  }
  exposure('p1', 500, 'control');
  add('p1', 'purchase', 501, 'control');
  exposure('early', -48, 'test');
  add('early', 'purchase', 5, 'test');
  exposure('twin', 3, 'control', 'twin-web');
  add('twin', 'view', 4, 'control', 'twin-web');
  add('twin', 'purchase', 5, 'control', 'twin-phone');
  exposure('p5', 7, 'control', 'p5', 'another-flag');
  add('p7', 'purchase', 8, 'unknown');
  add('p8', 'purchase', 24 * 40, 'test');
  return rows;
}

const inDates = (r: FixtureEvent) => r.at >= START.replace('T', ' ').slice(0, 19) && r.at <= END.replace('T', ' ').slice(0, 19);
const variantOf = (r: FixtureEvent, flagKey: string) => r.properties?.[`$feature/${flagKey}`] as string | undefined;
const zeros = () => new Map(VARIANTS.map((v) => [v, 0]));

/** Per variant: the metric's events sent under it, and the persons exposed to it (by `$feature_flag_called`, or by `exposureEvent` sent under it). */
export function trendsReference(rows: FixtureEvent[], flagKey: string, metric: string, exposureEvent?: string, metricMatches: (r: FixtureEvent) => boolean = () => true) {
  const count = zeros();
  const exposed = new Map(VARIANTS.map((v) => [v, new Set<string>()]));
  for (const r of rows.filter(inDates)) {
    const variant = variantOf(r, flagKey);
    if (r.event === metric && variant && VARIANTS.includes(variant) && metricMatches(r)) count.set(variant, count.get(variant)! + 1);
    if (exposureEvent) {
      if (r.event === exposureEvent && variant && VARIANTS.includes(variant)) exposed.get(variant)!.add(r.person);
    } else if (r.event === '$feature_flag_called' && r.properties?.$feature_flag === flagKey) {
      exposed.get(String(r.properties.$feature_flag_response))?.add(r.person);
    }
  }
  return VARIANTS.map((key) => ({ key, count: count.get(key)!, absolute_exposure: exposed.get(key)!.size }));
}

/** Per variant: persons who entered the funnel, and how many reached each step in order within `windowHours` of an entry. */
export function funnelReference(rows: FixtureEvent[], flagKey: string, steps: string[], windowHours = 14 * 24, stepMatches: ((r: FixtureEvent) => boolean)[] = []) {
  const isStep = (e: FixtureEvent, k: number) => e.event === steps[k] && (stepMatches[k]?.(e) ?? true);
  const byPerson = new Map<string, FixtureEvent[]>();
  for (const r of rows.filter(inDates)) byPerson.set(r.person, [...(byPerson.get(r.person) ?? []), r]);
  const reached = new Map(VARIANTS.map((v) => [v, steps.map(() => 0)]));
  for (const events of byPerson.values()) {
    events.sort((a, b) => a.at.localeCompare(b.at));
    const entries = events.filter((e) => isStep(e, 0) && VARIANTS.includes(variantOf(e, flagKey) ?? ''));
    if (entries.length === 0) continue;
    let level = 0;
    for (const entry of entries) {
      const limit = Date.parse(`${entry.at}Z`) + windowHours * 3_600_000;
      let at = entry.at;
      let depth = 1;
      for (let k = 1; k < steps.length; k++) {
        const next = events.find((e) => isStep(e, k) && e.at > at && Date.parse(`${e.at}Z`) <= limit);
        if (!next) break;
        at = next.at;
        depth += 1;
      }
      level = Math.max(level, depth);
    }
    const counts = reached.get(variantOf(entries[0]!, flagKey)!)!;
    for (let k = 0; k < level; k++) counts[k]! += 1;
  }
  return VARIANTS.map((key) => ({ key, steps: reached.get(key)! }));
}

/** The fixture's events, persons and distinct ids in `teamId`, each person with an id of its own. */
export async function insertFixture(clickhouse: Pick<ClickHouse, 'insert'>, teamId: number, rows: FixtureEvent[]): Promise<void> {
  const persons = [...new Set(rows.map((r) => r.person))];
  const ids = new Map(persons.map((p) => [p, randomUUID()]));
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, rows.map((r) => eventRow(teamId, r.distinctId, r.event, r.at, r.properties ?? {})));
  await clickhouse.insert('person', PERSON_COLUMNS, persons.map((p) => ({ id: ids.get(p), created_at: '2024-01-01 00:00:00', team_id: teamId, properties: '{}', is_identified: 1, is_deleted: 0, version: 1 })));
  const pairs = [...new Map(rows.map((r) => [r.distinctId, r.person])).entries()];
  await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, pairs.map(([d, p]) => ({ team_id: teamId, distinct_id: d, person_id: ids.get(p), is_deleted: 0, version: 1 })));
}

/** Another project's rows: the same flag key and distinct ids, everyone in test, three times the purchases. */
export function hostileFixture(flagKey: string): FixtureEvent[] {
  const feature = `$feature/${flagKey}`;
  const all = experimentFixture(flagKey).map((r) =>
    r.properties?.[feature] ? { ...r, properties: { ...r.properties, [feature]: 'test', ...('$feature_flag_response' in r.properties ? { $feature_flag_response: 'test' } : {}) } } : r,
  );
  const purchases = all.filter((r) => r.event === 'purchase');
  return [...all, ...purchases, ...purchases];
}
