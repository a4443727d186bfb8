import { randomInt } from 'node:crypto';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { HttpError } from '@tributary/http';
import { loadHogQLParser } from '@tributary/hogql';
import { testConfig, waitFor } from '@tributary/test-support';
import type { InsightCache } from '../src/query/insight-cache.js';
import { QueryService } from '../src/query/query-service.js';

/**
 * The endpoint's client gives up on a statement before ClickHouse stops it (a loaded server does
 * not stop one at its time limit on time): the statement is killed, not left running unwatched, and
 * the answer is the time limit's 400, never a 500.
 */
const config = testConfig();
const admin = createClickHouse(config);
// A wait far shorter than the statement's time limit, as a server too busy to keep its limit looks from the client.
const impatient = createClickHouse({ ...config, clickhouseUser: config.queryClickhouseUser, clickhousePassword: config.queryClickhousePassword }, { requestTimeoutMs: 1_000 });
const service = new QueryService({
  clickhouse: impatient,
  cache: {} as InsightCache,
  limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 },
  cohorts: { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [] },
  actions: { definitions: async () => [] },
});
const teamId = 700_000_000 + randomInt(90_000_000);

beforeAll(() => loadHogQLParser());
afterAll(async () => {
  await impatient.close();
  await admin.close();
});

const running = async () =>
  Number((await admin.query<{ n: string }>(sql`SELECT count() AS n FROM system.processes WHERE startsWith(query_id, ${`${teamId}_`})`))[0]!.n);

it('kills a statement its client stopped waiting for, and answers the time limit’s 400', async () => {
  // Four hundred million rows from nothing (two arrays of different lengths: 18.16 folds equal arrayJoins into one): seconds of work in a few megabytes.
  const query = 'SELECT count() FROM (SELECT arrayJoin(range(20000)) AS a, arrayJoin(range(20001)) AS b) WHERE cityHash64(a, b) % 7 = 1';
  const answer = await service.run({ id: teamId, timezone: 'UTC' }, { kind: 'HogQLQuery', query }, new AbortController().signal).catch((error: unknown) => error);
  expect(answer).toBeInstanceOf(HttpError);
  expect(answer).toMatchObject({ status: 400, code: 'query_timeout' });
  await waitFor(async () => (await running()) === 0, { timeoutMs: 10_000, what: 'the statement to be killed' });
});
