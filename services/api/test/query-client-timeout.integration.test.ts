import { randomInt } from 'node:crypto';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { HttpError } from '@tributary/http';
import { loadHogQLParser } from '@tributary/hogql';
import { testConfig, waitFor } from '@tributary/test-support';
import { uncachedQueryService } from './uncached-query-service.js';

/**
 * The endpoint's client gives up on a statement before ClickHouse stops it (a loaded server does
 * not stop one at its time limit on time): the statement is killed, not left running unwatched, and
 * the answer is the time limit's 400, never a 500.
 */
const config = testConfig();
const admin = createClickHouse(config);
// A wait far shorter than the statement's time limit, as a server too busy to keep its limit looks from the client.
const impatient = createClickHouse({ ...config, clickhouseUser: config.queryClickhouseUser, clickhousePassword: config.queryClickhousePassword }, { requestTimeoutMs: 500 });
const service = uncachedQueryService(impatient);
const teamId = 700_000_000 + randomInt(90_000_000);

beforeAll(async () => {
  await loadHogQLParser();
  // A million rows of the test's own project, read block by block: seconds of work in bounded memory.
  await admin.command(sql`INSERT INTO events (uuid, event, properties, timestamp, timestamp_ms, team_id, distinct_id, elements_chain, created_at, person_id, person_properties, person_created_at, group_0, group_1, group_2, group_3, group_4, inserted_at)
    SELECT generateUUIDv4(), 'e', '{}', now() - number % 3600, 0, ${teamId}, concat('d', toString(number % 1000)), '', now(), toUUID('00000000-0000-0000-0000-000000000000'), '{}', now(), '', '', '', '', '', now() FROM numbers(1000000)`);
});
afterAll(async () => {
  await impatient.close();
  await admin.close();
});

const running = async () =>
  Number((await admin.query<{ n: string }>(sql`SELECT count() AS n FROM system.processes WHERE startsWith(query_id, ${`${teamId}_`})`))[0]!.n);

it('kills a statement its client stopped waiting for, and answers the time limit’s 400', async () => {
  const query = 'SELECT sum(arraySum(arrayMap(x -> cityHash64(toString(x)) % 7, range(100 + cityHash64(distinct_id) % 2)))) FROM events';
  const answer = await service.run({ id: teamId, timezone: 'UTC' }, { kind: 'HogQLQuery', query }, new AbortController().signal).catch((error: unknown) => error);
  expect(answer).toBeInstanceOf(HttpError);
  expect(answer).toMatchObject({ status: 400, code: 'query_timeout' });
  await waitFor(async () => (await running()) === 0, { timeoutMs: 10_000, what: 'the statement to be killed' });
});
