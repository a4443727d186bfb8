import { DEMO_FLAG, generateDemoEvents } from './demo-events.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const DAY = 86_400_000;
const shape = { weeks: 4, users: 150, seed: 7, now: NOW };
const events = generateDemoEvents(shape);
const named = (name: string) => events.filter((e) => e.event === name);

describe('generated demo events', () => {
  it('are the same for the same seed and different for another', () => {
    expect(generateDemoEvents(shape)).toEqual(events);
    expect(generateDemoEvents({ ...shape, seed: 8 })).not.toEqual(events);
  });

  it('lie in the weeks asked for, all in the past, in time order, each with its own uuid', () => {
    const times = events.map((e) => Date.parse(e.timestamp!));
    expect(Math.max(...times)).toBeLessThan(NOW);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(NOW - 28 * DAY);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(events.map((e) => e.uuid)).size).toBe(events.length);
  });

  it('identify each signed-up visitor once, merging the anonymous id and setting person properties', () => {
    const identifies = named('$identify');
    expect(identifies).toHaveLength(named('signed up').length);
    for (const identify of identifies) {
      expect(identify.properties.$anon_distinct_id).toEqual(expect.any(String));
      expect(identify.properties.$set).toEqual(expect.objectContaining({ email: expect.stringContaining('@'), plan: 'free' }));
      expect(events.some((e) => e.distinct_id === identify.properties.$anon_distinct_id && e.event === '$pageview')).toBe(true);
    }
  });

  it('drop off along pageview, signed up, purchase, and buyers are signed-up users', () => {
    const visitors = new Set(named('$pageview').map((e) => e.distinct_id)).size - named('signed up').length;
    expect(named('signed up').length).toBeLessThan(visitors);
    expect(named('purchase').length).toBeGreaterThan(0);
    expect(named('purchase').length).toBeLessThan(named('signed up').length);
    const signedUp = new Set(named('signed up').map((e) => e.distinct_id));
    expect(named('purchase').every((e) => signedUp.has(e.distinct_id))).toBe(true);
  });

  it('bring visitors back in later weeks, and carry browser, os, path and utm on pageviews', () => {
    const weekOf = (timestamp: string) => Math.floor((NOW - Date.parse(timestamp)) / (7 * DAY));
    const weeksByUser = new Map<string, Set<number>>();
    for (const e of named('$pageview')) weeksByUser.set(e.distinct_id, (weeksByUser.get(e.distinct_id) ?? new Set()).add(weekOf(e.timestamp!)));
    expect([...weeksByUser.values()].filter((weeks) => weeks.size > 1).length).toBeGreaterThan(10);
    const pageview = named('$pageview')[0]!;
    expect(pageview.properties).toEqual(expect.objectContaining({ $browser: expect.any(String), $os: expect.any(String), $pathname: expect.stringMatching(/^\//), $current_url: expect.stringMatching(/^https:\/\//) }));
    expect(named('$pageview').some((e) => e.properties.utm_source === 'twitter')).toBe(true);
  });

  it('record the pricing page flag being called with the visitor\'s variant', () => {
    const calls = named('$feature_flag_called');
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls.map((e) => e.properties.$feature_flag_response))).toEqual(new Set(['test', 'control']));
    expect(calls.every((e) => e.properties.$feature_flag === DEMO_FLAG)).toBe(true);
  });
});
