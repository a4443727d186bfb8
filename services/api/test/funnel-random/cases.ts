import { randomUUID } from 'node:crypto';
import type { Fixture, StoredEvent } from '../insights-oracle/fixture.js';
import { expected } from '../insights-oracle/cases.js';
import type { FunnelsRequest } from '../insights-oracle/reference.js';

/**
 * Ordered and strict funnels with exclusions against the oracle's reference (PostHog's UDF walked
 * event by event) on random people: every event a step, a repeated step, an exclusion or neither,
 * minutes to hours apart, asked with exclusions over different ranges, windows and a breakdown,
 * and without them, where a person's repeats of a step are walked as the first of their run.
 * The fixed oracle (`insights-oracle/cases.ts`) has a few people; here hundreds of paths meet
 * exclusions before, between and after their steps. Another project holds the same distinct ids
 * and persons with exclusions and steps around every event. Asked of ClickHouse 26
 * (`funnel-random-chdb.test.ts`) and of the stack's 18.16 (`funnel-random.integration.test.ts`).
 */

const PEOPLE = 150;
const SEED = 20_241_129;

/** A small deterministic generator (mulberry32), so a failure is the same people every run. */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function randomFixture(): Fixture {
  const random = generator(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const events: StoredEvent[] = [];
  const persons: Fixture['persons'] = [];
  const distinctIds: Fixture['distinctIds'] = [];
  for (let p = 0; p < PEOPLE; p++) {
    const personId = randomUUID();
    const distinctId = `person-${p}`;
    persons.push({ id: personId, createdAt: '2024-01-01 00:00:00', properties: {}, version: 1 });
    distinctIds.push({ distinctId, personId, version: 1, isDeleted: false });
    // Whole minutes apart: no two of a person's events share a second.
    let time = Date.parse('2024-01-10T00:00:00Z') + Math.floor(random() * 600) * 60_000;
    const count = 2 + Math.floor(random() * 14);
    for (let e = 0; e < count; e++) {
      time += (1 + Math.floor(random() * (random() < 0.3 ? 1_500 : 120))) * 60_000;
      const stamp = new Date(time).toISOString();
      events.push({
        distinctId,
        event: pick(['a', 'a', 'b', 'b', 'c', 'x', 'x', 'z']),
        timestamp: `${stamp.slice(0, 10)} ${stamp.slice(11, 19)}`,
        ms: 0,
        properties: { side: pick(['left', 'right']) },
        personProperties: {},
        personId,
        group0: '',
      });
    }
  }
  const world = {
    timezone: 'UTC',
    events: events.map((e) => ({ event: e.event, distinctId: e.distinctId, time: Date.parse(`${e.timestamp.replace(' ', 'T')}Z`), properties: e.properties, personProperties: {}, storedPersonId: e.personId, group0: '' })),
    persons: persons.map((p) => ({ id: p.id, createdAt: Date.parse('2024-01-01T00:00:00Z'), properties: {}, version: 1 })),
    distinctIds,
  };
  return { world, batches: [events], persons, distinctIds };
}

/**
 * Another project under the same distinct ids and person ids, with an excluded event a minute
 * after each of the people's events and every step beside it: none of it may count, or exclude.
 */
export function hostile({ batches, persons, distinctIds, world }: Fixture): Fixture {
  const shifted = (e: StoredEvent, event: string, minutes: number): StoredEvent => {
    const stamp = new Date(Date.parse(`${e.timestamp.replace(' ', 'T')}Z`) + minutes * 60_000).toISOString();
    return { ...e, event, timestamp: `${stamp.slice(0, 10)} ${stamp.slice(11, 19)}` };
  };
  const events = batches.flat().flatMap((e) => [shifted(e, 'x', 1), shifted(e, 'a', -1), shifted(e, 'b', 2), shifted(e, 'c', 3)]);
  return { world, batches: [events], persons, distinctIds };
}

const step = (event: string) => ({ kind: 'EventsNode' as const, event });
const exclude = (funnelFromStep: number, funnelToStep: number, event = 'x') => ({ kind: 'EventsNode' as const, event, funnelFromStep, funnelToStep });
const funnel = (events: string[], funnelsFilter: FunnelsRequest['funnelsFilter'], rest: Partial<FunnelsRequest> = {}): FunnelsRequest => ({
  kind: 'FunnelsQuery',
  series: events.map(step),
  dateRange: { date_from: '2024-01-01', date_to: '2024-02-29' },
  funnelsFilter,
  ...rest,
});
const day = { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' as const };
const hours = { funnelWindowInterval: 3, funnelWindowIntervalUnit: 'hour' as const };

export const CASES: [string, FunnelsRequest][] = [
  ['an exclusion over every step', funnel(['a', 'b', 'c'], { ...day, exclusions: [exclude(0, 2)] })],
  ['an exclusion between the first two steps', funnel(['a', 'b', 'c'], { ...day, exclusions: [exclude(0, 1)] })],
  ['an exclusion between the last two steps, a 3-hour window', funnel(['a', 'b', 'c'], { ...hours, exclusions: [exclude(1, 2)] })],
  ['two exclusions over overlapping ranges', funnel(['a', 'b', 'c', 'b'], { ...day, exclusions: [exclude(0, 2), exclude(2, 3, 'z')] })],
  ['a step repeated, with an exclusion', funnel(['a', 'b', 'a', 'c'], { ...day, exclusions: [exclude(1, 3)] })],
  ['strict, an exclusion over every step', funnel(['a', 'b', 'c'], { funnelOrderType: 'strict', ...day, exclusions: [exclude(0, 2)] })],
  ['strict, an exclusion between the last two steps', funnel(['a', 'b', 'a'], { funnelOrderType: 'strict', ...hours, exclusions: [exclude(1, 2)] })],
  ['broken down by an event property, an exclusion', funnel(['a', 'b', 'c'], { ...day, exclusions: [exclude(0, 2)] }, { breakdownFilter: { breakdown: 'side', breakdown_type: 'event' } })],
  // Without exclusions: a person's repeated events of one step are walked as the first of their run.
  ['ordered, no exclusion, repeats of each step', funnel(['a', 'b', 'c'], hours)],
  ['strict, no exclusion', funnel(['a', 'b', 'c'], { funnelOrderType: 'strict', ...day })],
  ['unordered, no exclusion: every repeat a start of its own', funnel(['a', 'b', 'c'], { funnelOrderType: 'unordered', ...hours })],
  ['ordered, no exclusion, broken down', funnel(['a', 'b', 'a', 'c'], day, { breakdownFilter: { breakdown: 'side', breakdown_type: 'event' } })],
  // Every start's window reaches past the period, where the latest start must still be the one a step's path keeps.
  ['ordered, a window longer than the period', funnel(['a', 'b', 'c'], { funnelWindowInterval: 90, funnelWindowIntervalUnit: 'day' })],
  ['strict, a window longer than the period, an exclusion', funnel(['a', 'b', 'c'], { funnelOrderType: 'strict', funnelWindowInterval: 1_000, funnelWindowIntervalUnit: 'month', exclusions: [exclude(0, 1)] })],
  // Keys are UInt32 where time, rank and flags fit 32 bits, UInt64 where not: here years of seconds, below six steps.
  ['ordered, a period of years, an exclusion', funnel(['a', 'b', 'c'], { ...day, exclusions: [exclude(0, 2)] }, { dateRange: { date_from: '2019-01-01', date_to: '2024-02-29' } })],
  ['six steps, an exclusion over every step', funnel(['a', 'b', 'a', 'c', 'b', 'c'], { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'week', exclusions: [exclude(0, 5)] })],
];

/** The reference's answer; for a case with exclusions, checked to differ from the one without them, so the case asks something. */
export function referenceAnswer(fixture: Fixture, request: FunnelsRequest): unknown {
  const answer = expected(fixture.world, request);
  const withoutExclusions = expected(fixture.world, { ...request, funnelsFilter: { ...request.funnelsFilter, exclusions: [] } });
  if (request.funnelsFilter?.exclusions?.length && JSON.stringify(answer) === JSON.stringify(withoutExclusions)) throw new Error('the exclusions of this case leave nobody out');
  return answer;
}
