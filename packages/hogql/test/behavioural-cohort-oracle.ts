import { randomInt, randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, Sql, createClickHouse, serverOf, type ClickHouse, type ClickHouseServer } from '@tributary/clickhouse';
import type { BehaviouralFilter } from '@tributary/property-filters';
import { EVENT_ROW_COLUMNS, eventRow, replicasHold, testConfig, type EventRow } from '@tributary/test-support';
import { cohortPersonIdsQuery, loadHogQLParser, printQuery, type ActionDefinition, type CohortDefinition, type CohortGroup, type FilterContext } from '../src/index.js';
import { unguardedReads, type Engine } from './two-team-fixture.js';

/**
 * Behavioural cohorts against a reference: fixture events of a few persons over a pinned time
 * range, every kind of condition (and negation, AND/OR, cohorts within cohorts, an action) printed
 * by the real builder and run in ClickHouse, and the same membership computed here straight from
 * the fixture rows by plain TypeScript that shares no code with the builder. A second project
 * holds the same event names, distinct ids and even a person id, with events that would make its
 * persons members: none may show.
 */

const TEAM = 910_000_000 + randomInt(80_000_000);
const OTHER_TEAM = TEAM + 1 + randomInt(1_000_000);
const NOW = new Date('2026-05-10T12:00:00Z');
const DAY = 86_400_000;

const PERSONS = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay', 'gus'] as const;
type Person = (typeof PERSONS)[number];
const ID: Record<Person, string> = Object.fromEntries(PERSONS.map((p) => [p, randomUUID()])) as Record<Person, string>;
const OTHER_PERSON = randomUUID();

/** Who each distinct id is now: dan-old was eve's, then moved to dan. fay's person is deleted; gus did nothing. */
const CURRENT: Record<string, Person> = { ann: 'ann', 'ann-phone': 'ann', ben: 'ben', cat: 'cat', dan: 'dan', 'dan-old': 'dan', eve: 'eve', fay: 'fay' };
const LIVE: Person[] = ['ann', 'ben', 'cat', 'dan', 'eve', 'gus'];
const PLAN: Partial<Record<Person, string>> = { ann: 'pro', ben: 'free', cat: 'pro', eve: 'free', gus: 'pro' };

interface FixtureEvent {
  distinctId: string;
  event: string;
  daysAgo: number;
  properties?: Record<string, unknown>;
}

const FIXTURE: FixtureEvent[] = [
  ...[2, 5, 9, 20].map((daysAgo) => ({ distinctId: 'ann', event: 'purchase', daysAgo, properties: { amount: 5 } })),
  { distinctId: 'ann', event: 'signup', daysAgo: 100 },
  { distinctId: 'ann', event: '$pageview', daysAgo: 1, properties: { $current_url: 'https://x.test/pricing' } },
  { distinctId: 'ann-phone', event: 'purchase', daysAgo: 40, properties: { amount: 50 } },
  ...[45, 50, 80].map((daysAgo) => ({ distinctId: 'ben', event: 'purchase', daysAgo, properties: { amount: 20 } })),
  { distinctId: 'ben', event: 'signup', daysAgo: 10 },
  // After now: read by nothing.
  { distinctId: 'ben', event: 'purchase', daysAgo: -1, properties: { amount: 20 } },
  ...[3, 10, 17, 24].map((daysAgo) => ({ distinctId: 'cat', event: 'purchase', daysAgo, properties: { amount: 15 } })),
  { distinctId: 'cat', event: '$pageview', daysAgo: 60, properties: { $current_url: 'https://x.test/home' } },
  { distinctId: 'dan', event: 'purchase', daysAgo: 70, properties: { amount: 1 } },
  { distinctId: 'dan', event: 'purchase', daysAgo: 5, properties: { amount: 1 } },
  { distinctId: 'dan-old', event: 'purchase', daysAgo: 1, properties: { amount: 99 } },
  { distinctId: 'eve', event: 'purchase', daysAgo: 200 },
  { distinctId: 'eve', event: 'signup', daysAgo: 25 },
  { distinctId: 'fay', event: 'purchase', daysAgo: 1, properties: { amount: 30 } },
  // Just inside and just outside the thirty days.
  { distinctId: 'eve', event: '$pageview', daysAgo: 30 - 1 / 24, properties: { $current_url: 'https://x.test/pricing' } },
  { distinctId: 'ben', event: '$pageview', daysAgo: 30, properties: { $current_url: 'https://x.test/pricing' } },
];

const timestampOf = (daysAgo: number): Date => new Date(NOW.getTime() - daysAgo * DAY);
const text = (date: Date): string => date.toISOString().replace('T', ' ').slice(0, 19);

/** The other project: the same names and ids, every person's events recent and many, all under its own person. */
const OTHER_FIXTURE: FixtureEvent[] = ['ann', 'ben', 'gus', 'eve', 'dan-old'].flatMap((distinctId) =>
  [1, 2, 3, 8, 15, 22, 29, 70].flatMap((daysAgo) => [
    { distinctId, event: 'purchase', daysAgo, properties: { amount: 999 } },
    { distinctId, event: 'signup', daysAgo, properties: {} },
  ]),
);

async function insertFixture(clickhouse: ClickHouse): Promise<void> {
  const stored = (team: number, e: FixtureEvent, personId: string): EventRow => eventRow(team, e.distinctId, e.event, text(timestampOf(e.daysAgo)), e.properties ?? {}, { person_id: personId });
  // dan-old's events were stored under eve's person, before the move: the current mapping decides.
  const storedPerson = (e: FixtureEvent) => (e.distinctId === 'dan-old' ? ID.eve : ID[CURRENT[e.distinctId]!]);
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, [...FIXTURE.map((e) => stored(TEAM, e, storedPerson(e))), ...OTHER_FIXTURE.map((e) => stored(OTHER_TEAM, e, OTHER_PERSON))]);
  const person = (team: number, id: string, properties: object, version: number, isDeleted = 0) => ({ id, created_at: '2025-01-01 00:00:00', team_id: team, properties: JSON.stringify(properties), is_identified: 1, is_deleted: isDeleted, version });
  const persons = [
    ...LIVE.map((p) => person(TEAM, ID[p], PLAN[p] ? { plan: PLAN[p] } : {}, 1)),
    person(TEAM, ID.fay, { plan: 'pro' }, 1),
    person(TEAM, ID.fay, { plan: 'pro' }, 2, 1),
    person(OTHER_TEAM, OTHER_PERSON, { plan: 'pro' }, 1),
    // The other project's row under ann's id, at a higher version.
    person(OTHER_TEAM, ID.ann, { plan: 'other' }, 99),
  ];
  await clickhouse.insert('person', PERSON_COLUMNS, persons);
  const pdi = (team: number, distinctId: string, personId: string, version: number) => ({ team_id: team, distinct_id: distinctId, person_id: personId, is_deleted: 0, version });
  const distinctIds = [
    ...Object.entries(CURRENT).map(([distinctId, p]) => pdi(TEAM, distinctId, ID[p], distinctId === 'dan-old' ? 2 : 1)),
    pdi(TEAM, 'dan-old', ID.eve, 1),
    ...['ann', 'ben', 'gus', 'eve', 'dan-old'].map((distinctId) => pdi(OTHER_TEAM, distinctId, OTHER_PERSON, 99)),
  ];
  await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, distinctIds);
}

// ---- The reference: membership straight from the fixture rows.

type Match = (e: FixtureEvent) => boolean;
const BOUGHT_ACTION: ActionDefinition = { id: 71, name: 'bought or saw pricing', steps: [{ event: 'purchase', properties: [{ key: 'amount', operator: 'gt', value: 10, type: 'event' }] }, { event: '$pageview', url: '/pricing' }] };
const boughtOrPricing: Match = (e) => (e.event === 'purchase' && Number(e.properties?.amount) > 10) || (e.event === '$pageview' && String(e.properties?.$current_url ?? '').includes('/pricing'));

/** A point `n` intervals before now; months and years keep the day of the month (none of the fixture's need clamping). */
function before(n: number, unit: string): Date {
  if (unit === 'day') return new Date(NOW.getTime() - n * DAY);
  if (unit === 'week') return new Date(NOW.getTime() - 7 * n * DAY);
  const date = new Date(NOW);
  date.setUTCMonth(date.getUTCMonth() - (unit === 'year' ? 12 * n : n));
  return date;
}

/** Each live person's events (through their distinct ids' current mapping) before now, as times. */
function timesOf(person: Person, match: Match): number[] {
  return FIXTURE.filter((e) => CURRENT[e.distinctId] === person && match(e) && timestampOf(e.daysAgo) < NOW).map((e) => timestampOf(e.daysAgo).getTime());
}

const compareCount = (count: number, operator: string | undefined, value: number) => (operator === 'lte' ? count <= value : operator === 'exact' || operator === 'eq' ? count === value : count >= value);

function referenceHolds(filter: BehaviouralFilter, person: Person): boolean {
  const match: Match = filter.event_type === 'actions' ? boughtOrPricing : (e) => e.event === filter.key;
  const times = timesOf(person, match);
  const start = filter.explicit_datetime ? new Date(filter.explicit_datetime).getTime() : before(Number(filter.time_value), filter.time_interval!).getTime();
  const recent = filter.seq_time_value ? before(Number(filter.seq_time_value), filter.seq_time_interval!).getTime() : 0;
  const inWindow = times.filter((t) => t > start);
  switch (filter.value) {
    case 'performed_event':
      return inWindow.length > 0;
    case 'performed_event_multiple':
      // Counted among those who did it in the window at all, as PostHog's.
      return inWindow.length > 0 && compareCount(inWindow.length, filter.operator, Number(filter.operator_value));
    case 'performed_event_first_time':
      return times.length > 0 && Math.min(...times) >= start;
    case 'stopped_performing_event':
      return inWindow.some((t) => t <= recent) && !inWindow.some((t) => t > recent);
    case 'restarted_performing_event':
      return times.some((t) => t <= start) && !times.some((t) => t > start && t <= recent) && times.some((t) => t > recent);
    case 'performed_event_regularly': {
      const total = Number(filter.total_periods);
      const lowest = before(Number(filter.time_value) * total, filter.time_interval!).getTime();
      if (!times.some((t) => t > lowest)) return false;
      let satisfied = 0;
      for (let p = 0; p < total; p++) {
        const high = p === 0 ? NOW.getTime() : before(Number(filter.time_value) * p, filter.time_interval!).getTime();
        const low = before(Number(filter.time_value) * (p + 1), filter.time_interval!).getTime();
        if (compareCount(times.filter((t) => t > low && t <= high).length, filter.operator, Number(filter.operator_value))) satisfied++;
      }
      return satisfied >= Number(filter.min_periods);
    }
  }
}

type Condition = BehaviouralFilter | { key: string; type: 'person'; value: string; negation?: boolean } | { key: 'id'; type: 'cohort'; value: number; negation?: boolean };
interface Group {
  type: 'AND' | 'OR';
  values: (Group | Condition)[];
}

const STATIC_ID = 501;
const STATIC_MEMBERS: Person[] = ['ann'];

function referenceGroup(group: Group, person: Person, cohorts: Map<number, Group>): boolean {
  const results = group.values.map((value): boolean => {
    if ('values' in value) return referenceGroup(value, person, cohorts);
    let holds: boolean;
    if (value.type === 'person') holds = PLAN[person] === value.value;
    else if (value.type === 'cohort') holds = value.value === STATIC_ID ? STATIC_MEMBERS.includes(person) : referenceGroup(cohorts.get(value.value)!, person, cohorts);
    else holds = referenceHolds(value, person);
    return value.negation ? !holds : holds;
  });
  return group.type === 'OR' ? results.some(Boolean) : results.every(Boolean);
}

// ---- The cases.

const b = (value: BehaviouralFilter['value'], rest: Partial<BehaviouralFilter> = {}): BehaviouralFilter => ({ type: 'behavioral', key: 'purchase', event_type: 'events', value, time_value: 30, time_interval: 'day', ...rest });
const and = (...values: Group['values']): Group => ({ type: 'AND', values });
const or = (...values: Group['values']): Group => ({ type: 'OR', values });

/** Each case is a cohort, by id; cohorts may name others (and the static cohort STATIC_ID). */
const CASES: [string, number, Group][] = [
  ['performed an event in the last 30 days', 1, and(b('performed_event'))],
  ['did not perform it (negation)', 2, and(b('performed_event', { negation: true }))],
  ['performed it since an explicit date', 3, and(b('performed_event', { explicit_datetime: '2026-05-04T00:00:00Z' }))],
  ['performed it at least 3 times in 60 days', 4, and(b('performed_event_multiple', { operator: 'gte', operator_value: 3, time_value: 60 }))],
  ['performed it at most 2 times in 2 months', 5, and(b('performed_event_multiple', { operator: 'lte', operator_value: 2, time_value: 2, time_interval: 'month' }))],
  ['performed it exactly 4 times in 4 weeks', 6, and(b('performed_event_multiple', { operator: 'exact', operator_value: 4, time_value: 4, time_interval: 'week' }))],
  ['performed signup for the first time in 30 days', 7, and(b('performed_event_first_time', { key: 'signup' }))],
  ['stopped: in 90 days but not in the last 30', 8, and(b('stopped_performing_event', { time_value: 90, seq_time_value: 30, seq_time_interval: 'day' }))],
  ['restarted: before 60 days, not since, again in the last 14', 9, and(b('restarted_performing_event', { time_value: 60, seq_time_value: 2, seq_time_interval: 'week' }))],
  ['regularly: at least once a week in 3 of the last 4 weeks', 10, and(b('performed_event_regularly', { time_value: 1, time_interval: 'week', total_periods: 4, min_periods: 3, operator: 'gte', operator_value: 1 }))],
  ['an action, in the last 30 days', 11, and(b('performed_event', { event_type: 'actions', key: BOUGHT_ACTION.id }))],
  ['an action, over a year', 12, and(b('performed_event_multiple', { event_type: 'actions', key: BOUGHT_ACTION.id, time_value: 1, time_interval: 'year', operator: 'gte', operator_value: 2 }))],
  ['AND with a person property', 13, and({ key: 'plan', type: 'person', value: 'pro' }, b('performed_event'))],
  ['OR of a condition and a negated one', 14, or(b('performed_event_first_time', { key: 'signup' }), b('performed_event', { negation: true, time_value: 60 }))],
  ['nested groups', 15, or(and(b('performed_event'), { key: 'plan', type: 'person', value: 'free' }), and(b('stopped_performing_event', { time_value: 90, seq_time_value: 30, seq_time_interval: 'day' })))],
  ['a cohort within a cohort, less a static one', 16, and({ key: 'id', type: 'cohort', value: 1 }, { key: 'id', type: 'cohort', value: STATIC_ID, negation: true })],
  ['not in a cohort that is itself within cohorts', 17, and({ key: 'id', type: 'cohort', value: 16, negation: true }, { key: 'id', type: 'cohort', value: 14 })],
];

const COHORTS = new Map<number, Group>(CASES.map(([, id, group]) => [id, group]));

function contextFor(distinctIdsOfStatic: readonly string[]): FilterContext {
  const cohorts = new Map<number, CohortDefinition>(CASES.map(([, id, group]) => [id, { id, static: false, filters: group as CohortGroup }]));
  cohorts.set(STATIC_ID, { id: STATIC_ID, static: true, distinctIds: distinctIdsOfStatic });
  return { now: NOW, cohorts, actions: new Map([[BOUGHT_ACTION.id, BOUGHT_ACTION]]) };
}

/** The oracle on `engine`: every case's members in ClickHouse equal the reference's, and nothing of the other project shows. */
export function behaviouralCohortOracle(engine: Engine): void {
  let clickhouse: ClickHouse;
  let server: ClickHouseServer;
  beforeAll(async () => {
    await loadHogQLParser();
    const config = testConfig();
    clickhouse = engine === 'chdb' ? await (await import('@tributary/test-support/chdb')).createChdbClickHouse() : createClickHouse(config);
    server = await serverOf(clickhouse);
    await insertFixture(clickhouse);
    // On a cluster each shard reads its own replica of the identities: an id it has no mapping for yet falls back to the event's stored person.
    if (engine === 'server') await replicasHold(clickhouse, config, [TEAM, OTHER_TEAM]);
  });
  afterAll(() => clickhouse.close());

  const membersIn = async (teamId: number, cohortId: number): Promise<{ ids: string[]; sql: string }> => {
    const sql = printQuery(cohortPersonIdsQuery(cohortId, contextFor(['ann', 'ann-phone'])), { teamId, server }).clickhouse;
    const { data } = await clickhouse.queryCompact(Sql.trusted(sql));
    return { ids: data.map((row) => String(row[0])).sort(), sql };
  };

  it('the reference itself is not trivial: each case takes some live persons and leaves others', () => {
    for (const [name, , group] of CASES) {
      const taken = LIVE.filter((p) => referenceGroup(group, p, COHORTS));
      expect({ name, some: taken.length > 0, notAll: taken.length < LIVE.length }).toEqual({ name, some: true, notAll: true });
    }
  });

  it.each(CASES)('%s', async (_name, id, group) => {
    const { ids, sql } = await membersIn(TEAM, id);
    const expected = LIVE.filter((p) => referenceGroup(group, p, COHORTS));
    const byId = new Map(PERSONS.map((p) => [ID[p], p]));
    expect(ids.map((i) => byId.get(i) ?? i).sort()).toEqual([...expected].sort());
    expect(unguardedReads(sql, TEAM)).toEqual([]);
  });

  it("a project's cohorts take only its own persons: the other project's same names and ids take its own", async () => {
    expect((await membersIn(OTHER_TEAM, 1)).ids).toEqual([OTHER_PERSON]);
    expect((await membersIn(OTHER_TEAM, 2)).ids).toEqual([ID.ann]);
  });
}
