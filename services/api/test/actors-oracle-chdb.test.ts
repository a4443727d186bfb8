import { randomInt } from 'node:crypto';
import { useChdbOracle } from './uncached-query-service.js';
import { buildFixture } from './insights-oracle/fixture.js';
import { ACTOR_CASES, expectedAt, observedAt, pointsOf } from './insights-oracle/actors-points.js';

/**
 * The actors oracle (`actors-oracle.integration.test.ts`) on a current ClickHouse (chdb's 26.x):
 * the persons behind every point, printed for it as for any server, are as many as the insight
 * shows there, and the other project's persons under the same distinct ids are never among them.
 */
const TEAM = 800_000_000 + randomInt(90_000_000);
const fixture = buildFixture('UTC');
const other = buildFixture('UTC', { other: true });
const { ask: run } = useChdbOracle(TEAM, fixture, other);

describe('the persons behind every point are as many as the insight shows there, on ClickHouse 26', () => {
  it.each(ACTOR_CASES)('%s', async (_name, request) => {
    const insight = await run(request);
    const foreign = new Set(other.persons.map((p) => p.id));
    for (const point of pointsOf(request, insight.results)) {
      const body = await run({ kind: 'ActorsQuery', source: point.source, limit: 1000 });
      expect(observedAt(point, body)).toEqual(expectedAt(point));
      expect(body.results.filter((row: any[]) => foreign.has(row[0].id))).toEqual([]);
    }
  });

  it('a person without a row is listed without properties; the others with theirs and their distinct ids', async () => {
    const source = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'purchase', math: 'dau' }], interval: 'month', dateRange: { date_from: '2024-01-01', date_to: '2024-01-31' } };
    const body = await run({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source, day: '2024-01-01' }, select: ['actor', 'properties.country'], orderBy: ['id'] });
    const byIds = new Map(body.results.map((row: any[]) => [row[0].distinct_ids.join(','), row]));
    expect((byIds.get('') as any[])[0]).toMatchObject({ properties: {}, created_at: null });
    expect((byIds.get('carol') as any[])[1]).toBe('DE');
  });
});
