import { randomUUID } from 'node:crypto';
import { Sql, createClickHouse, migrateClickHouse, serverOf, sql, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { MUTATION_REQUEST_TIMEOUT_MS, SQUASH_SCHEDULE, runOverrideSquash } from '@tributary/deletions';
import { loadHogQLParser, parseSelect, printQuery, type PersonsOnEventsMode } from '@tributary/hogql';
import { createLogger } from '@tributary/logger';
import { migratePostgres, type Pool } from '@tributary/postgres';
import { createRedis } from '@tributary/redis';
import { EVENT_ROW_COLUMNS, createPool, createTestTenant, eventRow, replicasHold, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { dropIsolatedStores, isolatedStores } from '../../api/test/isolated-stores.js';
import { startSquashScheduler } from '../src/deletion-scheduler.js';

/**
 * The override squash (persons on events): the events of a distinct id that moved to another
 * person are rewritten to that person once the move has settled, in its project alone, and the
 * id is recorded as squashed at that version, so persons-on-events queries stop joining it; only
 * in projects that read persons on events. Stores of the test's own: the job acts on every such
 * project, and rewrites the parts it touches.
 */
const config = testConfig(isolatedStores(uniqueName('squash')));
const logger = createLogger('squash-test', config.logLevel);
const now = new Date('2026-11-30T03:00:00Z');
const settled = '2026-11-30 01:00:00';
const recent = '2026-11-30 02:30:00';
const P = { alice: randomUUID(), anon: randomUUID(), later: randomUUID(), gone: randomUUID(), other: randomUUID(), theirs: randomUUID(), newest: randomUUID() };

let pool: Pool;
// One connection: the job reads Postgres on the connection that holds its lock, and a second would wait for ever.
let jobPool: Pool;
let clickhouse: ClickHouse;
let ours: TestTenant;
let theirs: TestTenant;

const pdi = (team: number, distinct_id: string, person_id: string, version: number, stored: string, is_deleted = 0) => ({ team_id: team, distinct_id, person_id, is_deleted, version, _timestamp: stored });
const PDI_COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version', '_timestamp'] as const;

// On a cluster each shard joins its own replica of the identity tables: they must hold what was written.
const replicated = () => replicasHold(clickhouse, config, [ours.project.id, theirs.project.id], ['person_distinct_id', 'squashed_distinct_ids', 'override_squashes']);
const job = () => ({ pool: jobPool, clickhouse, topology: topologyOf(config), logger, clock: () => now, pollMs: 100 });
const stored = async (tenant: TestTenant) =>
  (await clickhouse.query<{ distinct_id: string; person: string }>(sql`SELECT distinct_id, toString(person_id) AS person FROM events WHERE team_id = ${tenant.project.id} ORDER BY timestamp`)).map((r) => [r.distinct_id, r.person]);
const mutations = async () => Number((await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${config.clickhouseDatabase}`))[0]!.n);

/** Each event's person as HogQL reads it in a mode, printed for this server as the query endpoint prints. */
async function persons(personsOnEvents: PersonsOnEventsMode): Promise<{ rows: unknown[][]; sql: string }> {
  const printed = printQuery(await parseSelect('SELECT distinct_id, person_id FROM events ORDER BY timestamp'), { teamId: ours.project.id, server: await serverOf(clickhouse), personsOnEvents });
  return { rows: (await clickhouse.queryCompact(Sql.trusted(printed.clickhouse))).data, sql: printed.clickhouse };
}

/**
 * HogQL's answers in both modes: `expected`, or the same in both. On a cluster the other shards
 * join the identity tables of their own database, not the test's isolated one, so answers are
 * compared on a single server only (the HogQL corpus compares the modes on a cluster).
 */
async function expectAnswers(expected?: unknown[][]): Promise<void> {
  if (config.clickhouseCluster) return;
  const disabled = (await persons('disabled')).rows;
  if (expected) expect(disabled).toEqual(expected);
  expect((await persons('person_id_override_properties_joined')).rows).toEqual(disabled);
}

describe('the override squash', () => {
  beforeAll(async () => {
    await migratePostgres(config);
    await migrateClickHouse(config);
    await loadHogQLParser();
    pool = createPool(config, { max: 3 });
    jobPool = createPool(config, { max: 1 });
    clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
    [ours, theirs] = [await createTestTenant(pool, config), await createTestTenant(pool, config)];
    // Ours reads persons on events; theirs keeps the default (disabled), which reads the identity tables anyway.
    await pool.query(`UPDATE projects SET modifiers = '{"personsOnEventsMode": "person_id_override_properties_joined"}' WHERE id = $1`, [ours.project.id]);
    const team = ours.project.id;
    const other = theirs.project.id;
    await clickhouse.insert('events', EVENT_ROW_COLUMNS, [
      eventRow(team, 'alice', '$pageview', '2026-11-29 10:00:00', {}, { person_id: P.alice }),
      // anon's events carry the person it had before it moved to alice, an hour and more ago.
      eventRow(team, 'anon', '$pageview', '2026-11-29 09:00:00', {}, { person_id: P.anon }),
      eventRow(team, 'anon', 'signed up', '2026-11-29 09:30:00', {}, { person_id: P.anon }),
      // late moved to alice half an hour ago: ingest may still hold events of it.
      eventRow(team, 'late', '$pageview', '2026-11-29 11:00:00', {}, { person_id: P.later }),
      // gone's person was deleted after it moved: nothing to rewrite it to.
      eventRow(team, 'gone', '$pageview', '2026-11-29 12:00:00', {}, { person_id: P.gone }),
      // Another project's id of the same name, which never moved, and a settled move of its own.
      eventRow(other, 'anon', '$pageview', '2026-11-29 09:00:00', {}, { person_id: P.other }),
      eventRow(other, 'merged', '$pageview', '2026-11-29 09:30:00', {}, { person_id: P.theirs }),
    ]);
    await clickhouse.insert('person_distinct_id', PDI_COLUMNS, [
      pdi(team, 'alice', P.alice, 0, settled),
      pdi(team, 'anon', P.anon, 0, settled),
      pdi(team, 'anon', P.alice, 1, settled),
      pdi(team, 'late', P.later, 0, settled),
      pdi(team, 'late', P.alice, 1, recent),
      pdi(team, 'gone', P.gone, 0, settled),
      pdi(team, 'gone', P.alice, 1, settled),
      pdi(team, 'gone', P.alice, 2, settled, 1),
      pdi(other, 'anon', P.other, 0, settled),
      pdi(other, 'merged', P.theirs, 0, settled),
      pdi(other, 'merged', P.other, 1, settled),
    ]);
    await replicated();
  });

  afterAll(async () => {
    await pool.end();
    await jobPool.end();
    await clickhouse.close();
    await dropIsolatedStores(config);
  });

  it("rewrites a settled move's events in its own project only, and only in projects in the override mode, records it, and persons-on-events answers stay the same", async () => {
    const expected = [['anon', P.alice], ['anon', P.alice], ['alice', P.alice], ['late', P.alice], ['gone', P.gone]];
    await expectAnswers(expected);

    expect(await runOverrideSquash(job())).toEqual({ distinctIds: 1, mutations: 1, skipped: false });
    await replicated();
    expect(await stored(ours)).toEqual([['anon', P.alice], ['anon', P.alice], ['alice', P.alice], ['late', P.later], ['gone', P.gone]]);
    // Theirs is not in the override mode: its move is left to the identity join.
    expect(await stored(theirs)).toEqual([['anon', P.other], ['merged', P.theirs]]);
    const squashed = await clickhouse.query<{ team_id: string; distinct_id: string; version: string }>(sql`SELECT toString(team_id) AS team_id, distinct_id, toString(version) AS version FROM squashed_distinct_ids`);
    expect(squashed).toEqual([{ team_id: String(ours.project.id), distinct_id: 'anon', version: '1' }]);

    await expectAnswers(expected);
  });

  it('squashes nothing twice, and makes no mutation when nothing moved since', async () => {
    const before = await mutations();
    expect(await runOverrideSquash(job())).toEqual({ distinctIds: 0, mutations: 0, skipped: false });
    expect(await mutations()).toBe(before);
  });

  it('squashes an id again after it moves again, and a recent move once it settled', async () => {
    await clickhouse.insert('person_distinct_id', PDI_COLUMNS, [pdi(ours.project.id, 'anon', P.newest, 2, recent)]);
    await replicated();
    // Squashed at version 1, not at its latest: the override mode joins it again until the squash runs.
    await expectAnswers([['anon', P.newest], ['anon', P.newest], ['alice', P.alice], ['late', P.alice], ['gone', P.gone]]);
    expect(await runOverrideSquash({ ...job(), clock: () => new Date(now.getTime() + 3_600_000) })).toEqual({ distinctIds: 2, mutations: 1, skipped: false });
    await replicated();
    expect(await stored(ours)).toEqual([['anon', P.newest], ['anon', P.newest], ['alice', P.alice], ['late', P.alice], ['gone', P.gone]]);
    await expectAnswers();
  });

  it("records each run's cut for the projects in the override mode, and queries group only the ids stored since the latest", async () => {
    const cuts = await clickhouse.query<{ team_id: string; cut: string }>(sql`SELECT toString(team_id) AS team_id, toString(max(settled_before)) AS cut FROM override_squashes GROUP BY team_id`);
    expect(cuts).toEqual([{ team_id: String(ours.project.id), cut: '2026-11-30 03:00:00' }]);
    if (config.clickhouseCluster) return;
    await clickhouse.insert('person_distinct_id', PDI_COLUMNS, [
      // Stored before the cut, as no move the squash left is: read as squashed, so never grouped.
      pdi(ours.project.id, 'alice', P.newest, 1, settled),
      pdi(ours.project.id, 'late', P.newest, 2, '2026-11-30 03:30:00'),
    ]);
    const onEvents = (await persons('person_id_override_properties_joined')).rows;
    expect(onEvents).toEqual([['anon', P.newest], ['anon', P.newest], ['alice', P.alice], ['late', P.newest], ['gone', P.gone]]);
  });

  it('runs daily at 03:00 UTC in the worker', async () => {
    const connection = createRedis(config, { forQueues: true });
    const scheduler = await startSquashScheduler({ connection, prefix: config.queuePrefix, pool, clickhouse, topology: topologyOf(config), logger });
    try {
      expect(await scheduler.queue.getJobSchedulers()).toEqual([expect.objectContaining({ key: SQUASH_SCHEDULE.id, pattern: '0 3 * * *', tz: 'UTC' })]);
      await scheduler.queue.obliterate({ force: true });
    } finally {
      await scheduler.close();
      connection.disconnect();
    }
  });
});
