/**
 * Disk per event and per person, for docs/production.md: events loaded into a ClickHouse database
 * of their own (the insights bench's generator; RICH=1 adds posthog-js's ids, time and user agent)
 * and merged, read from system.parts; persons and distinct ids in a Postgres database of their own,
 * read with pg_total_relation_size; events sent to an in-process capture on topics of their own,
 * read as the size of the topic's segment files in the broker's data folder
 * (TRIBUTARY_STATE_DIR/kafka/data: run it on the broker's machine). Each store's copy is dropped
 * at the end. Run: npx tsx bench/disk.ts [clickhouse|postgres|kafka]
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { Sql, createClickHouse, migrateClickHouse, sql } from '@tributary/clickhouse';
import { createKafka, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, migratePostgres } from '@tributary/postgres';
import { testConfig, uniqueName } from '@tributary/test-support';
import { startCapture } from '../services/capture/test/capture-harness.js';
import { PROPERTIES_SQL } from './bench-dataset.js';
import { realisticEvent } from './events.js';
import { STATE_DIR } from './lib.js';

const EVENTS = Number(process.env.EVENTS ?? 500_000);
const PERSONS = Number(process.env.PERSONS ?? 100_000);
const KAFKA_EVENTS = Number(process.env.KAFKA_EVENTS ?? 100_000);
const name = uniqueName('measure');
const shared = testConfig();
const pgUrl = new URL(shared.databaseUrl);
pgUrl.pathname = `/${name}`;
const config = testConfig({ clickhouseDatabase: name, databaseUrl: pgUrl.toString() });

// posthog-js's pageview carries ids with no pattern ($session_id and $window_id per session, $device_id per person, $pageview_id per event), the moment, the user agent and the viewport.
const RICH_SQL = `concat(substring(${PROPERTIES_SQL}, 1, length(${PROPERTIES_SQL}) - 1),
  ',"$session_id_v7":"', toString(generateUUIDv4()), '","$window_id":"', toString(generateUUIDv4()), '","$pageview_id":"', toString(generateUUIDv4()),
  '","$device_id":"', toString(cityHash64(intHash64(number) % 20000)), '","$time":', toString(1767225600 + number), '.', toString(number % 1000),
  ',"$raw_user_agent":"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/', toString(120 + number % 5), '.0.0.0 Safari/537.36"',
  ',"$viewport_height":', toString(700 + number % 300), ',"$viewport_width":', toString(1200 + number % 700), ',"$timezone":"Europe/Berlin","$lib_version":"1.200.0","token":"phc_0123456789abcdefghijklmnopqrstuvwxyzABCDE"}')`;
const PROPS = process.env.RICH ? RICH_SQL : PROPERTIES_SQL;

async function clickhouseFigures() {
  await migrateClickHouse(config);
  const ch = createClickHouse(config, { requestTimeoutMs: 900_000 });
  const span = 56 * 86400;
  const end = Math.floor(Date.now() / 1000);
  const distinctIds = Math.floor(EVENTS / 25);
  const person = (n: string) => `toUUID(concat('00000000-0000-4000-8000-', substring(hex(toUInt64(${n}) + 0x1000000000000), 3)))`;
  const did = `toUInt32(intHash64(number) % ${distinctIds})`;
  for (let start = 0; start < EVENTS; start += 100_000) {
    await ch.command(Sql.trusted(`INSERT INTO events (uuid, event, properties, timestamp, timestamp_ms, team_id, distinct_id, elements_chain, created_at, person_id, person_properties, person_created_at, group_0, group_1, group_2, group_3, group_4, inserted_at)
      SELECT generateUUIDv4(), multiIf(intHash32(number) % 5 = 0, '$pageview', intHash32(number) % 20 = 1, 'signed up', 'button clicked'), ${PROPS},
        toDateTime(${end - span}) + intDiv(number * ${span}, ${EVENTS}), number % 1000, 1, concat('user-', toString(${did})), '', now(),
        ${person(did)}, concat('{"email":"user-', toString(${did}), '@example.com","plan":"free"}'), toDateTime(${end - span}), '', '', '', '', '', now()
      FROM (SELECT number + ${start} AS number FROM numbers(100000))`));
  }
  await ch.command(Sql.trusted(`INSERT INTO person (id, created_at, team_id, properties, is_identified, is_deleted, version)
    SELECT ${person('number')}, now(), 1, concat('{"email":"user-', toString(number), '@example.com","name":"User ', toString(number), '","plan":"free","$initial_browser":"Chrome","$initial_os":"Windows","$initial_current_url":"https://example.com/pricing?ref=3","$initial_referring_domain":"www.google.com","$initial_utm_source":"newsletter"}'), 1, 0, 0 FROM numbers(${PERSONS})`));
  await ch.command(Sql.trusted(`INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version) SELECT 1, concat('user-', toString(number)), ${person('number')}, 0, 0 FROM numbers(${PERSONS})`));
  const sizes = async () =>
    ch.query<{ table: string; rows: string; disk: string; uncompressed: string; parts: string }>(sql`SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS disk, sum(data_uncompressed_bytes) AS uncompressed, count() AS parts FROM system.parts WHERE database = ${name} AND active GROUP BY table ORDER BY table`);
  const asInserted = await sizes();
  for (const table of ['events', 'person', 'person_distinct_id']) await ch.command(Sql.trusted(`OPTIMIZE TABLE ${table} FINAL`));
  const merged = await sizes();
  const columns = await ch.query<{ name: string; c: string; u: string }>(sql`SELECT name, data_compressed_bytes AS c, data_uncompressed_bytes AS u FROM system.columns WHERE database = ${name} AND table = 'events' ORDER BY data_compressed_bytes DESC LIMIT 6`);
  const avgProps = await ch.query<{ p: string }>(Sql.trusted('SELECT avg(length(properties)) AS p FROM events'));
  await ch.command(Sql.trusted(`DROP DATABASE ${name}`));
  await ch.close();
  return { asInserted, merged, columns, avgPropertiesBytes: avgProps[0]!.p };
}

async function postgresFigures() {
  await migratePostgres(config);
  const pool = createPool(config, { max: 1, statementTimeoutMs: 600_000 });
  await pool.query("INSERT INTO organizations (id, name) VALUES (gen_random_uuid(), 'm')");
  await pool.query("INSERT INTO projects (uuid, organization_id, name, api_token) SELECT gen_random_uuid(), id, 'm', 'phc_measure' FROM organizations");
  const team = (await pool.query('SELECT id FROM projects')).rows[0].id;
  await pool.query(
    `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version)
     SELECT gen_random_uuid(), $1, jsonb_build_object('email', 'user-' || n || '@example.com', 'name', 'User ' || n, 'plan', 'free', '$initial_browser', 'Chrome', '$initial_os', 'Windows',
       '$initial_current_url', 'https://example.com/pricing?ref=3', '$initial_referring_domain', 'www.google.com', '$initial_utm_source', 'newsletter'), true, now(), 1
     FROM generate_series(1, $2) AS n`,
    [team, PERSONS],
  );
  // 1.5 distinct ids a person: the anonymous one and, for half, an identified one.
  await pool.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) SELECT $1, 'anon-' || uuid, id FROM persons`, [team]);
  await pool.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) SELECT $1, 'user-' || id, id FROM persons WHERE id % 2 = 0`, [team]);
  await pool.query('VACUUM ANALYZE persons');
  await pool.query('VACUUM ANALYZE person_distinct_ids');
  const { rows } = await pool.query(`SELECT pg_total_relation_size('persons') AS persons, pg_total_relation_size('person_distinct_ids') AS pdi, pg_database_size(current_database()) AS db`);
  await pool.end();
  const server = new URL(shared.databaseUrl);
  server.pathname = '/postgres';
  execFileSync('psql', [server.toString(), '-c', `DROP DATABASE "${name}" WITH (FORCE)`]);
  return rows[0];
}

async function kafkaFigures() {
  const capture = await startCapture();
  const token = capture.tenant.project.api_token;
  const batch = 50;
  for (let i = 0; i < KAFKA_EVENTS; i += batch) {
    const events = Array.from({ length: batch }, (_, j) => {
      const e = realisticEvent(i + j, 20_000);
      return { ...e, uuid: crypto.randomUUID(), properties: { ...e.properties, $lib_version: '1.200.0', $insert_id: crypto.randomUUID(), $time: Date.now() / 1000, distinct_id: e.distinct_id } };
    });
    const r = await fetch(`${capture.url}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch: events }) });
    if (!r.ok) throw new Error(`capture ${r.status}`);
  }
  const dataDir = path.resolve(STATE_DIR, 'kafka/data');
  const topic = capture.topics.realtime;
  let bytes = 0;
  for (const dir of readdirSync(dataDir).filter((d) => d.startsWith(`${topic}-`))) {
    for (const file of readdirSync(path.join(dataDir, dir)).filter((f) => f.endsWith('.log'))) bytes += statSync(path.join(dataDir, dir, file)).size;
  }
  const admin = createKafka(shared, createLogger('measure', 'warn'), 'measure').admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  const messages = offsets.reduce((n, p) => n + Number(p.high), 0);
  await capture.close();
  await admin.deleteTopics({ topics: Object.values(topicNames(capture.topics.realtime.replace('events_realtime', ''))) });
  await admin.disconnect();
  return { events: KAFKA_EVENTS, messages, bytes, bytesPerEvent: bytes / KAFKA_EVENTS };
}

const which = process.argv[2] ?? 'all';
if (which === 'all' || which === 'clickhouse') console.log('clickhouse', JSON.stringify(await clickhouseFigures(), null, 1));
if (which === 'all' || which === 'postgres') console.log('postgres', JSON.stringify(await postgresFigures(), null, 1));
if (which === 'all' || which === 'kafka') console.log('kafka', JSON.stringify(await kafkaFigures(), null, 1));
process.exit(0);
