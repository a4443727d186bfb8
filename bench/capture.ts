/**
 * Capture throughput through the front door against the real broker, and in the same run a bare
 * Node HTTP server that only reads and parses the same bodies (the baseline). Needs `make up`.
 * The ingest consumer is paused (SIGSTOP) while it runs, so that draining the flood into Postgres
 * and ClickHouse does not compete with capture for this machine's two cores; it resumes after.
 * Run: npx tsx bench/capture.ts [seconds]
 */
import http from 'node:http';
import { once } from 'node:events';
import { readCredentialsOrExit, realisticEvent } from './events.js';
import { drive, peakRssMb, pidOf, table, type LoadResult } from './lib.js';

const seconds = Number(process.argv[2] ?? 15);
const credentials = await readCredentialsOrExit();
const batchBody = JSON.stringify({ api_key: credentials.TRIBUTARY_PROJECT_API_KEY, batch: Array.from({ length: 100 }, (_, i) => realisticEvent(i)) });
const singleBody = JSON.stringify({ api_key: credentials.TRIBUTARY_PROJECT_API_KEY, ...realisticEvent(0) });

const bare = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString());
    res.setHeader('content-type', 'application/json');
    res.end('{"status":1}');
  });
});
bare.listen(0, '127.0.0.1');
await once(bare, 'listening');
const barePort = (bare.address() as { port: number }).port;

const runs: [string, string, string, number][] = [
  ['/batch/ (100 events)', `${credentials.TRIBUTARY_URL}/batch/`, batchBody, 100],
  ['/capture/ (1 event)', `${credentials.TRIBUTARY_URL}/capture/`, singleBody, 1],
];
const rows = [];
const ingestPid = await pidOf('ingest');
process.kill(ingestPid, 'SIGSTOP');
const resumeIngest = () => process.kill(ingestPid, 'SIGCONT');
process.once('exit', resumeIngest);
for (const [name, url, body, eventsPerRequest] of runs) {
  const baseline: LoadResult = await drive({ url: `http://127.0.0.1:${barePort}/`, body, connections: 32, seconds });
  const real: LoadResult = await drive({ url, body, connections: 32, seconds });
  rows.push({
    route: name,
    'events/s': real.requestsPerSecond * eventsPerRequest,
    'req/s': real.requestsPerSecond,
    'p50 ms': real.p50,
    'p99 ms': real.p99,
    'non-2xx': real.non2xx + real.errors,
    'bare events/s': baseline.requestsPerSecond * eventsPerRequest,
    'ratio to bare': real.requestsPerSecond / baseline.requestsPerSecond,
  });
}
resumeIngest();
bare.close();
table(rows);
console.log(`capture peak RSS: ${(await peakRssMb(await pidOf('capture'))).toFixed(1)} MB`);
