import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { createKafka, createProducer, encodeCaptureMessage, ensureTopics, messageKey, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { createTestTenant, freePort, testConfig, uniqueName, waitFor } from '@tributary/test-support';

/**
 * Two ingest processes in one consumer group, as `INGEST_REPLICAS=2` runs them. Each user's
 * events come from three distinct ids, so they land on different partitions and processes,
 * and the `$identify` and `$create_alias` that join them merge persons another process may be
 * changing at the same moment. Whatever the interleaving, each user must end as one person.
 */
const config = testConfig();
const prefix = `${uniqueName('rep')}_`;
const topics = topicNames(prefix);
const logger = createLogger('ingest-replicas-test', config.logLevel);
const pool = createPool(config, { max: 2 });
const clickhouse = createClickHouse(config);
const kafka = createKafka(config, logger, 'ingest-replicas-test');
const producer = createProducer(kafka);
const replicas: ChildProcess[] = [];
const USERS = 60;

function startReplica(port: number): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/ingest/src/main.ts'], {
    env: { ...process.env, KAFKA_TOPIC_PREFIX: prefix, INGEST_CONSUMER_GROUP: `${prefix}ingest`, INGEST_PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  replicas.push(child);
  return child;
}

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 4);
  await admin.disconnect();
  await producer.connect();
});

afterAll(async () => {
  for (const child of replicas) child.kill('SIGTERM');
  await Promise.all(replicas.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
  await producer.disconnect();
  await pool.end();
  await clickhouse.close();
});

it('two ingest processes share the partitions and leave every merged person correct', async () => {
  const tenant = await createTestTenant(pool, config);
  const token = tenant.project.api_token;
  // Ports from the kernel: random ones could be taken by another test's server.
  startReplica(await freePort());
  startReplica(await freePort());

  const events: { distinct_id: string; event: string; properties: Record<string, unknown> }[] = [];
  for (let i = 0; i < USERS; i++) {
    events.push({ event: '$pageview', distinct_id: `anon-${i}`, properties: { $set: { a: i } } });
    events.push({ event: '$pageview', distinct_id: `device-${i}`, properties: { $set: { d: i } } });
  }
  for (let i = 0; i < USERS; i++) {
    events.push({ event: '$identify', distinct_id: `user-${i}`, properties: { $anon_distinct_id: `anon-${i}`, $set: { u: i } } });
    // The identified user aliases a device id with an anonymous person of its own, as posthog-js's
    // alias() does: whichever partition is first, the device's person joins the user's.
    events.push({ event: '$create_alias', distinct_id: `user-${i}`, properties: { alias: `device-${i}` } });
    events.push({ event: 'purchase', distinct_id: `anon-${i}`, properties: { $set: { bought: true } } });
  }
  const now = new Date().toISOString();
  await producer.send({
    topic: topics.realtime,
    acks: -1,
    messages: events.map((e) => {
      const message = { uuid: randomUUID(), distinct_id: e.distinct_id, ip: '127.0.0.1', data: JSON.stringify(e), now, sent_at: null, token, historical_migration: false };
      return { key: messageKey(token, e.distinct_id), value: encodeCaptureMessage(message) };
    }),
  });

  const team = tenant.project.id;
  await waitFor(
    async () => {
      const [row] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${team}`);
      return Number(row?.n) >= events.length;
    },
    { what: `${events.length} events in ClickHouse`, timeoutMs: 120_000, intervalMs: 500 },
  );

  const { rows } = await pool.query<{ distinct_id: string; person_id: number; uuid: string; properties: Record<string, unknown>; is_identified: boolean }>(
    `SELECT d.distinct_id, p.id AS person_id, p.uuid, p.properties, p.is_identified
       FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1`,
    [team],
  );
  const byId = new Map(rows.map((r) => [r.distinct_id, r]));
  const persons = await pool.query<{ n: string }>('SELECT count(*) AS n FROM persons WHERE team_id = $1', [team]);
  expect(Number(persons.rows[0]!.n)).toBe(USERS);

  const copies = await clickhouse.query<{ distinct_id: string; person_id: string }>(
    sql`SELECT distinct_id, toString(argMax(person_id, version)) AS person_id FROM person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id`,
  );
  const copyOf = new Map(copies.map((c) => [c.distinct_id, c.person_id]));
  const personCopies = await clickhouse.query<{ id: string; properties: string; is_deleted: string }>(
    sql`SELECT toString(id) AS id, argMax(properties, version) AS properties, toString(argMax(is_deleted, version)) AS is_deleted FROM person WHERE team_id = ${team} GROUP BY id`,
  );
  const personCopy = new Map(personCopies.map((p) => [p.id, p]));

  for (let i = 0; i < USERS; i++) {
    const [anon, device, user] = [`anon-${i}`, `device-${i}`, `user-${i}`].map((id) => byId.get(id));
    expect(anon?.person_id).toBeDefined();
    expect(device?.person_id).toBe(anon!.person_id);
    expect(user?.person_id).toBe(anon!.person_id);
    expect(anon!.properties).toEqual({ a: i, d: i, u: i, bought: true });
    expect(anon!.is_identified).toBe(true);
    for (const id of [`anon-${i}`, `device-${i}`, `user-${i}`]) expect(copyOf.get(id)).toBe(anon!.uuid);
    const copy = personCopy.get(anon!.uuid);
    expect(copy?.is_deleted).toBe('0');
    expect(JSON.parse(copy!.properties)).toEqual(anon!.properties);
  }
  const live = personCopies.filter((p) => p.is_deleted === '0');
  expect(live).toHaveLength(USERS);
}, 180_000);
