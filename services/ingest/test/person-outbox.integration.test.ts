import { randomUUID } from 'node:crypto';
import { createClickHouse, personRow, sql } from '@tributary/clickhouse';
import { PersonCache } from '@tributary/control-plane';
import { createLogger } from '@tributary/logger';
import { withTransaction } from '@tributary/postgres';
import { createRedis } from '@tributary/redis';
import { createPool, createTestTenant, testConfig } from '@tributary/test-support';
import { RowWriter, type RefusedRow } from '../src/clickhouse-writer.js';
import { PersonOutbox, recordOutboxEntry } from '../src/persons/person-outbox.js';

/**
 * An entry names a surviving person by its uuid only and carries a merged-away person's
 * tombstone whole; the sweeper reads the survivor and all its distinct ids back from Postgres.
 */
const config = testConfig();
const pool = createPool(config, { max: 4 });
const clickhouse = createClickHouse(config);
const redis = createRedis(config);

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
  redis.disconnect();
});

test('the sweeper writes a stale entry: the survivor and its distinct ids as Postgres has them, the loser as a tombstone', async () => {
  const { project } = await createTestTenant(pool, config);
  const [survivorUuid, loserUuid] = [randomUUID(), randomUUID()];
  const [anon, user] = [`outbox-anon-${survivorUuid}`, `outbox-user-${survivorUuid}`];
  const createdAt = new Date('2026-01-02T03:04:05Z');
  const cache = new PersonCache(redis);
  await cache.set(project.id, [anon], { personId: 0, personUuid: loserUuid, properties: { stale: true } });

  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version) VALUES ($1, $2, '{"email":"o@x.io"}', true, $3, 4) RETURNING id`,
      [survivorUuid, project.id, createdAt],
    );
    await client.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version) VALUES ($1, $2, $3, 1), ($1, $4, $3, 0)', [project.id, anon, rows[0]!.id, user]);
    const loser = personRow({ uuid: loserUuid, team_id: project.id, properties: {}, is_identified: false, created_at: createdAt, version: 2 }, { deleted: true });
    await recordOutboxEntry(client, { persons: [survivorUuid], deleted: [loser] });
  });

  const outbox = new PersonOutbox({ pool, writer: new RowWriter(clickhouse, { maxRowsPerInsert: 1_000 }), sendRefusedRows: async () => undefined, personCache: cache, logger: createLogger('outbox-test', 'silent'), staleAfterMs: 0 });
  expect(await outbox.sweep()).toBeGreaterThanOrEqual(1);

  const persons = await clickhouse.query<{ id: string; properties: string; is_identified: number; is_deleted: number; version: string }>(
    sql`SELECT id, properties, is_identified, is_deleted, version FROM person WHERE team_id = ${project.id} ORDER BY is_deleted`,
  );
  expect(persons.map((p) => ({ ...p, version: Number(p.version) }))).toEqual([
    { id: survivorUuid, properties: '{"email":"o@x.io"}', is_identified: 1, is_deleted: 0, version: 4 },
    { id: loserUuid, properties: '{}', is_identified: 0, is_deleted: 1, version: 2 },
  ]);
  const ids = await clickhouse.query<{ distinct_id: string; person_id: string; version: string }>(
    sql`SELECT distinct_id, person_id, version FROM person_distinct_id WHERE team_id = ${project.id} ORDER BY distinct_id`,
  );
  expect(ids.map((d) => ({ ...d, version: Number(d.version) }))).toEqual([
    { distinct_id: anon, person_id: survivorUuid, version: 1 },
    { distinct_id: user, person_id: survivorUuid, version: 0 },
  ]);
  // Decide's cache may hold a state from before the changes: it is forgotten, not trusted.
  expect(await cache.get(project.id, anon)).toBeNull();
});

test('the sweeper sends a copy ClickHouse refuses for its content to the dead-letter topic and clears the entry, rather than failing every sweep', async () => {
  const { project } = await createTestTenant(pool, config);
  const [survivorUuid, refusedUuid] = [randomUUID(), randomUUID()];
  await withTransaction(pool, async (client) => {
    await client.query(`INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version) VALUES ($1, $2, '{}', false, now(), 1)`, [survivorUuid, project.id]);
    // A merged-away person's tombstone travels whole in the entry, and no later change of that
    // person would write it again; this one's creation time is one ClickHouse cannot read.
    const refused = { ...personRow({ uuid: refusedUuid, team_id: project.id, properties: {}, is_identified: false, created_at: new Date(), version: 2 }, { deleted: true }), created_at: '-271821-04-20 00:00:00' };
    await recordOutboxEntry(client, { persons: [survivorUuid], deleted: [refused] });
  });
  const sent: RefusedRow[] = [];
  const outbox = new PersonOutbox({
    pool,
    writer: new RowWriter(clickhouse, { maxRowsPerInsert: 1_000 }),
    sendRefusedRows: async (rows) => void sent.push(...rows),
    personCache: new PersonCache(redis),
    logger: createLogger('outbox-test', 'silent'),
    staleAfterMs: 0,
  });
  expect(await outbox.sweep()).toBeGreaterThanOrEqual(1);

  const persons = await clickhouse.query<{ id: string }>(sql`SELECT id FROM person WHERE team_id = ${project.id}`);
  expect(persons.map((p) => p.id)).toEqual([survivorUuid]);
  expect(sent.map((r) => [r.table, r.line.toString().split('\t', 1)[0], r.reason.slice(0, 8)])).toEqual([['person', refusedUuid, 'Code: 41']]);
  const left = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ingest_outbox WHERE payload::text LIKE $1`, [`%${refusedUuid}%`]);
  expect(left.rows[0]!.n).toBe(0);
});
