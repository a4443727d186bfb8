import { randomInt } from 'node:crypto';
import { Sql, createClickHouse, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser } from '@tributary/hogql';
import { testConfig } from '@tributary/test-support';
import type { QueryRequest, QueryService } from '../src/query/query-service.js';
import { uncachedQueryService } from './uncached-query-service.js';

/**
 * Unique counts are exact, as PostHog's `count(DISTINCT …)`: ClickHouse's `uniq` keeps 32-bit
 * hashes and samples past 65,536 of them, so at this size it is off by hundreds.
 */
const ACTORS = 300_000;

export function describeExactCounts(engine: 'server' | 'chdb'): void {
  const team = 790_000_000 + randomInt(9_000_000);
  let clickhouse: ClickHouse;
  let service: QueryService;
  const project = { id: team, timezone: 'UTC' };

  beforeAll(async () => {
    await loadHogQLParser();
    clickhouse = engine === 'chdb' ? await (await import('@tributary/test-support/chdb')).createChdbClickHouse() : createClickHouse(testConfig());
    const at = Math.floor(Date.now() / 3_600_000) * 3600 - 86_400;
    // Person ids random, as ingest's hashed ids are: 18.16's exact count hashes a UUID by its first half, and a constant one makes it quadratic.
    await clickhouse.command(
      Sql.trusted(`INSERT INTO events (uuid, event, properties, timestamp, team_id, distinct_id, person_id, group_0, inserted_at)
        SELECT generateUUIDv4(), '$pageview', concat('{"$session_id":"s-', toString(number), '"}'), toDateTime(${at}), ${team}, concat('d-', toString(number)), generateUUIDv4(), concat('org-', toString(number)), now()
        FROM numbers(${ACTORS})`),
    );
    service = uncachedQueryService(clickhouse);
  }, 300_000);
  afterAll(() => clickhouse.close());

  const ask = async (request: object) => (await service.run(project, request as QueryRequest, new AbortController().signal)) as { results: any[] };

  it.each([
    ['dau', { math: 'dau' }],
    ['weekly_active', { math: 'weekly_active' }],
    ['unique_session', { math: 'unique_session' }],
    ['unique_group', { math: 'unique_group', math_group_type_index: 0 }],
  ])('a trend of %s counts every actor once', async (_math, math) => {
    const answer = await ask({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', ...math }], dateRange: { date_from: '-7d' }, trendsFilter: { display: 'BoldNumber' } });
    expect(answer.results.map((r) => r.aggregated_value)).toEqual([ACTORS]);
  });
}
