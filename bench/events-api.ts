/**
 * Stored-events endpoint latency on a big project: fills ClickHouse with N events (5 million by
 * default) for one fresh project with a single INSERT ... SELECT, then times the first page, a
 * page at offset 10,000, and a filtered query (event name plus one property filter) through the
 * front door. Needs `make up`. Run: npx tsx bench/events-api.ts [events] [repeats]
 */
import { loadConfig } from '@tributary/config';
import { EVENTS_TABLE_COLUMNS, Sql, createClickHouse, sql } from '@tributary/clickhouse';
import { createPool, createTestTenant } from '@tributary/test-support';
import { percentile, table } from './lib.js';

const total = Number(process.argv[2] ?? 5_000_000);
const repeats = Number(process.argv[3] ?? 20);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const pool = createPool(config, { max: 2 });
const clickhouse = createClickHouse(config, { requestTimeoutMs: 600_000 });
const tenant = await createTestTenant(pool, config);
const team = tenant.project.id;

// Events spread over 90 days, 50,000 distinct ids, four event names and a few properties.
const fillStarted = Date.now();
await clickhouse.command(sql`
  INSERT INTO events (${Sql.trusted(EVENTS_TABLE_COLUMNS.join(', '))})
  SELECT generateUUIDv4(),
         arrayElement(['$pageview', 'button clicked', 'signed up', '$autocapture'], (number % 4) + 1),
         concat('{"$browser":"', arrayElement(['Chrome', 'Firefox', 'Safari', 'Edge'], (intHash32(number) % 4) + 1),
                '","$pathname":"/page/', toString(number % 100), '","plan":"', if(number % 10 = 0, 'pro', 'free'), '"}'),
         toDateTime('2026-08-01 00:00:00') + intDiv(number * 7776000, ${total}),
         number % 1000, ${team}, concat('user-', toString(number % 50000)), '', now(),
         generateUUIDv4(), '{}', now(), '', '', '', '', '', now()
  FROM system.numbers LIMIT ${total}`);
console.log(`inserted ${total} events in ${((Date.now() - fillStarted) / 1000).toFixed(1)} s`);

const base = `${config.publicUrl}/api/environments/${team}/events/`;
const queries: [string, string][] = [
  ['first page (limit 100)', '?limit=100'],
  ['offset 10,000 (limit 100)', '?limit=100&offset=10000'],
  ['event + property filter', `?limit=100&event=%24pageview&properties=${encodeURIComponent(JSON.stringify([{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }]))}`],
];
const rows = [];
for (const [name, query] of queries) {
  const timings: number[] = [];
  let results = 0;
  for (let i = 0; i < repeats + 1; i++) {
    const started = process.hrtime.bigint();
    const response = await fetch(base + query, { headers: { authorization: `Bearer ${tenant.personalApiKey}` } });
    const body = (await response.json()) as { results?: unknown[] };
    if (!response.ok) throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
    // The first request warms ClickHouse's caches and is left out, as a steady server would be.
    if (i > 0) timings.push(Number(process.hrtime.bigint() - started) / 1e6);
    results = body.results?.length ?? 0;
  }
  rows.push({ query: name, results, 'p50 ms': percentile(timings, 50), 'p99 ms': percentile(timings, 99), 'max ms': Math.max(...timings) });
}
table(rows);

if (!process.env.KEEP_BENCH_EVENTS) {
  await clickhouse.command(sql`ALTER TABLE events DELETE WHERE team_id = ${team}`);
  console.log('queued the removal of the bench events (set KEEP_BENCH_EVENTS=1 to keep them)');
}
await clickhouse.close();
await pool.end();
