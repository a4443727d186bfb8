/**
 * Ingest throughput end to end: produces 200,000 events for 10,000 distinct ids (10% $identify
 * with $set, 2% $create_alias, 1% $groupidentify, the rest page views and clicks) straight to
 * the realtime topic, then times until every one is queryable in ClickHouse. Needs `make up`
 * (the running ingest service consumes the topic). Run: npx tsx bench/ingest.ts [events]
 */
import { randomUUID } from 'node:crypto';
import { loadConfig } from '@tributary/config';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { createKafka, createProducer, encodeCaptureMessage, messageKey, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, createTestTenant } from '@tributary/test-support';
import { realisticEvent } from './events.js';
import { pidOf, sampleRssWhile, table } from './lib.js';

const total = Number(process.argv[2] ?? 200_000);
const distinctIds = 10_000;
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const logger = createLogger('bench-ingest', 'warn');
const pool = createPool(config, { max: 2 });
const clickhouse = createClickHouse(config);
const tenant = await createTestTenant(pool, config);
const token = tenant.project.api_token;
const topic = topicNames(config.kafkaTopicPrefix).realtime;

function eventAt(i: number): Record<string, unknown> {
  const user = `bench-${i % distinctIds}`;
  const kind = i % 100;
  if (kind < 10) return { event: '$identify', distinct_id: user, properties: { $anon_distinct_id: `anon-${i % distinctIds}`, $set: { email: `${user}@example.test`, plan: i % 3 ? 'free' : 'pro' } } };
  if (kind < 12) return { event: '$create_alias', distinct_id: user, properties: { alias: `alias-${i % distinctIds}` } };
  if (kind < 13) return { event: '$groupidentify', distinct_id: user, properties: { $group_type: 'company', $group_key: `co-${i % 200}`, $group_set: { seats: i % 500 } } };
  const event = realisticEvent(i, distinctIds);
  return { ...event, distinct_id: user, properties: { ...event.properties, $groups: { company: `co-${i % 200}` } } };
}

const kafka = createKafka(config, logger, 'bench-ingest');
const producer = createProducer(kafka);
await producer.connect();

async function countRows(): Promise<{ events: number; persons: number; distinctIds: number; groups: number }> {
  const team = tenant.project.id;
  const [[e], [p], [d], [g]] = await Promise.all([
    clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${team}`),
    clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM person WHERE team_id = ${team}`),
    clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM person_distinct_id WHERE team_id = ${team}`),
    clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM groups WHERE team_id = ${team}`),
  ]);
  return { events: Number(e?.n), persons: Number(p?.n), distinctIds: Number(d?.n), groups: Number(g?.n) };
}

const started = Date.now();
const { value: rows, peakRssMb } = await sampleRssWhile(await pidOf('ingest'), async () => {
  const now = new Date().toISOString();
  for (let offset = 0; offset < total; offset += 2_000) {
    const messages = [];
    for (let i = offset; i < Math.min(total, offset + 2_000); i++) {
      const event = eventAt(i);
      const distinctId = String(event.distinct_id);
      const message = { uuid: randomUUID(), distinct_id: distinctId, ip: '127.0.0.1', data: JSON.stringify(event), now, sent_at: null, token, historical_migration: false };
      messages.push({ key: messageKey(token, distinctId), value: encodeCaptureMessage(message) });
    }
    await producer.send({ topic, messages });
  }
  const produced = Date.now();
  console.log(`produced ${total} events in ${((produced - started) / 1000).toFixed(1)} s`);
  for (;;) {
    const counts = await countRows();
    if (counts.events >= total) return counts;
    if (Date.now() - started > 15 * 60_000) throw new Error(`only ${counts.events} of ${total} events arrived within 15 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
});
const seconds = (Date.now() - started) / 1000;

table([
  {
    events: total,
    'seconds to queryable': seconds,
    'events/s end to end': total / seconds,
    'ingest peak RSS MB': peakRssMb,
    'CH event rows': rows.events,
    'CH person rows': rows.persons,
    'CH distinct id rows': rows.distinctIds,
    'CH group rows': rows.groups,
  },
]);
await producer.disconnect();
await clickhouse.close();
await pool.end();
