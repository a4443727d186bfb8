/**
 * `tributary import` end to end: writes an export of N events (default 1,000,000; posthog-js
 * shaped, about 700 bytes each, gzipped NDJSON with uuids) once, then runs the real CLI against
 * the front door (PUBLIC_URL) into the demo project, and prints events/s and the importer's
 * peak RSS, then how long ingest took to make them all queryable. Needs `make up`. A second
 * run sends the same uuids again: the rows land, and ClickHouse's merges keep one of each.
 * Run: npx tsx bench/import.ts [events]
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { createClickHouse, sql } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';
import { readCredentialsOrExit, realisticEvent } from './events.js';
import { sampleRssWhile, table } from './lib.js';

const total = Number(process.argv[2] ?? 1_000_000);
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const credentials = await readCredentialsOrExit();
const project = Number(credentials.TRIBUTARY_PROJECT_ID);

mkdirSync('.tributary/bench', { recursive: true });
const file = `.tributary/bench/import-${total}.ndjson.gz`;
if (!existsSync(file)) {
  console.log(`writing ${file} ...`);
  async function* lines() {
    for (let i = 0; i < total; i++) yield `${JSON.stringify({ ...realisticEvent(i), uuid: randomUUID() })}\n`;
  }
  await pipeline(Readable.from(lines()), createGzip({ level: 1 }), createWriteStream(file));
}
const { size } = await stat(file);

const started = Date.now();
const child = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/main.ts', 'import', file, '--project', String(project), '--url', config.publicUrl], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, LOG_LEVEL: 'warn' },
});
let summary = '';
child.stdout.on('data', (chunk: Buffer) => (summary += chunk.toString()));
const { peakRssMb: sampledPeak } = await sampleRssWhile(child.pid!, async () => {
  const exit = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (exit !== 0) throw new Error(`import exited with ${exit}: ${summary}`);
});
const seconds = (Date.now() - started) / 1000;

// Rows are counted by arrival, so a rerun over the same export is timed the same way.
const clickhouse = createClickHouse(config);
const count = async () =>
  Number((await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${project} AND inserted_at >= ${new Date(started - 1000)}`))[0]?.n ?? 0);
let landed = await count();
const deadline = Date.now() + 15 * 60_000;
while (landed < total && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  landed = await count();
}
const queryableAfter = (Date.now() - started) / 1000;
await clickhouse.close();

console.log(summary.trim());
table([
  {
    events: total,
    'file MB (gzip)': size / 1024 / 1024,
    'import s': seconds,
    'import events/s': total / seconds,
    'importer peak RSS MB': sampledPeak,
    'rows written since start': landed,
    'all queryable after s': landed >= total ? queryableAfter : Number.NaN,
  },
]);
