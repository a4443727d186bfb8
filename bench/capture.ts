/**
 * Capture throughput against the real broker, on capture's own port, and in the same run a bare
 * Node HTTP server (bench/bare-server.ts, its own process) that only reads and parses the same
 * bodies (the baseline, reached directly like capture's port). Needs `make up`.
 * The capture measured is a copy the bench starts (the compiled code `make up` runs, configured
 * by the bench's own environment as `make up` is by its, logging at warn) on topics of its own,
 * which it deletes at the end, however the run ends short of SIGKILL: the millions of
 * events a run sends never reach `make up`'s topics, so its ingest has nothing to drain after a
 * run, and nothing to do during one but what else comes in.
 * BENCH_FRONT_DOOR=1 also drives `make up`'s capture through nginx; those events do go to its
 * topics, so its ingest is paused (SIGSTOP) meanwhile and drains them after.
 * Both run with the same number of connections (default 16, a busy site's SDK traffic behind a
 * load balancer; a fixed concurrency sets the latency: p99 is that many requests queued).
 * Ends with one line: RESULT capture_batch_events_per_s=... bare_events_per_s=... ratio=... p99_ms=... rss_mb=...
 * Each server is driven for a warm-up first (BENCH_WARMUP_SECONDS, default 10 s) and only then
 * measured: a freshly started capture and broker run their code unoptimised for the first tens of
 * seconds (measured: 30k events/s in the first 10 s, 44k in the next 10 s, same process).
 * Then the bare server and capture's own port take turns (BENCH_ROUNDS, default 3, each turn
 * [seconds] long; see driveInTurns), and the ratio is the median of the rounds'.
 * Run: npx tsx bench/capture.ts [seconds per turn, 10] [connections, 16]
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadConfig } from '@tributary/config';
import { createKafka, ensureTopics, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { freePort, uniqueName } from '@tributary/test-support';
import { readCredentialsOrExit, realisticEvent } from './events.js';
import { STATE_DIR, drive, driveInTurns, peakRssPerProcessMb, pidOf, startBareServer, table, type LoadResult } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.argv[3] ?? 16);
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const credentials = await readCredentialsOrExit();
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
/**
 * Bodies taken in turn, made before the run so that the load generator spends nothing on them:
 * together their events have 10,000 distinct ids, each in one body. One body sent again and
 * again put the same 100 ids in every request, each far over the per-id rate past which capture
 * reroutes events to the overflow topic, so the bench measured that path and not the usual one.
 */
function inTurn(bodies: string[]): { body: string; nextBody: () => string } {
  let next = 0;
  return { body: bodies[0]!, nextBody: () => bodies[next++ % bodies.length]! };
}
const apiKey = credentials.TRIBUTARY_PROJECT_API_KEY;
const batchBodies = inTurn(Array.from({ length: 100 }, (_, b) => JSON.stringify({ api_key: apiKey, batch: Array.from({ length: 100 }, (_, i) => realisticEvent(b * 100 + i)) })));
const singleBodies = inTurn(Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ api_key: apiKey, ...realisticEvent(i) })));

// As infra/services.sh runs it: compiled.
execFileSync('npx', ['tsx', 'infra/compile.ts'], { stdio: ['ignore', 'ignore', 'inherit'] });
const prefix = `${uniqueName('bench')}_`;
const admin = createKafka(config, createLogger('bench-capture', 'warn'), 'bench-capture').admin();
await admin.connect();
await ensureTopics(admin, prefix, config.kafkaPartitions);
const capturePort = await freePort();
const captureLog = join(STATE_DIR, 'logs', 'bench-capture.log');
mkdirSync(dirname(captureLog), { recursive: true });
const nodeFlags = execFileSync('sh', ['infra/node-flags.sh', 'capture'], { encoding: 'utf8' }).split(/\s+/).filter(Boolean);
const capture = spawn(process.execPath, [...nodeFlags, '--conditions=tributary-compiled', 'services/capture/dist/main.js'], {
  env: { ...process.env, KAFKA_TOPIC_PREFIX: prefix, CAPTURE_PORT: String(capturePort), LOG_LEVEL: 'warn' },
  stdio: ['ignore', openSync(captureLog, 'w'), 'inherit'],
});
const captureExited = once(capture, 'exit');
let cleanedUp: Promise<void> | null = null;
/** Stops the copy (killed if it has not drained in 30 s) and deletes its topics, whether or not the run got through. */
const cleanUp = () =>
  (cleanedUp ??= (async () => {
    if (capture.exitCode === null && capture.signalCode === null) {
      capture.kill('SIGTERM');
      const killer = setTimeout(() => capture.kill('SIGKILL'), 30_000);
      await captureExited;
      clearTimeout(killer);
    }
    await admin.deleteTopics({ topics: Object.values(topicNames(prefix)) });
    await admin.disconnect();
  })());
process.once('exit', () => capture.kill('SIGKILL'));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
const serviceUrl = `http://127.0.0.1:${capturePort}`;

const frontDoor = process.env.BENCH_FRONT_DOOR === '1';
const runs: [string, string, ReturnType<typeof inTurn>, number][] = [
  ['/batch/ (100 events)', '/batch/', batchBodies, 100],
  ['/capture/ (1 event)', '/capture/', singleBodies, 1],
];

/** Every run, then capture's peak RSS: what the RESULT line reports. */
async function measure() {
  const readyBy = Date.now() + 60_000;
  while ((await fetch(`${serviceUrl}/_ready`).catch(() => null))?.ok !== true) {
    if (capture.exitCode !== null || capture.signalCode !== null || Date.now() > readyBy) throw new Error(`the capture copy did not become ready: see ${captureLog}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const bare = await startBareServer('{"status":1}');
  const rows = [];
  const capturePid = capture.pid!;
  const ingestPid = frontDoor ? await pidOf('ingest').catch(() => null) : null;
  if (ingestPid !== null) {
    process.kill(ingestPid, 'SIGSTOP');
    process.once('exit', () => process.kill(ingestPid, 'SIGCONT'));
  }
  const results = new Map<string, { real: LoadResult | null; direct: LoadResult; baseline: LoadResult; ratio: number }>();
  for (const [name, path, bodies, eventsPerRequest] of runs) {
    await drive({ url: `${bare.url}/`, ...bodies, connections, seconds: Math.min(warmUpSeconds, 3) });
    await drive({ url: `${serviceUrl}${path}`, ...bodies, connections, seconds: warmUpSeconds });
    const { baseline, service: direct, ratio } = await driveInTurns({
      rounds,
      baseline: { url: `${bare.url}/`, ...bodies, connections, seconds, serverPid: bare.pid },
      service: { url: `${serviceUrl}${path}`, ...bodies, connections, seconds, serverPid: capturePid },
    });
    const real: LoadResult | null = frontDoor ? await drive({ url: `${credentials.TRIBUTARY_URL}${path}`, ...bodies, connections, seconds }) : null;
    results.set(name, { real, direct, baseline, ratio });
    rows.push({
      route: name,
      'events/s': real ? real.requestsPerSecond * eventsPerRequest : '-',
      'p99 ms': real ? real.p99 : '-',
      'non-2xx': (real ? real.non2xx + real.errors : 0) + direct.non2xx + direct.errors,
      'direct events/s': direct.requestsPerSecond * eventsPerRequest,
      'direct p99 ms': direct.p99,
      'bare events/s': baseline.requestsPerSecond * eventsPerRequest,
      'bare p99 ms': baseline.p99,
      'front door/bare': real ? real.requestsPerSecond / baseline.requestsPerSecond : '-',
      'direct/bare': ratio,
      'capture cpu µs/event': direct.serverCpuUsPerRequest / eventsPerRequest,
      'bare cpu µs/event': baseline.serverCpuUsPerRequest / eventsPerRequest,
      'capture kernel µs/event': direct.serverKernelUsPerRequest / eventsPerRequest,
      'bare kernel µs/event': baseline.serverKernelUsPerRequest / eventsPerRequest,
    });
  }
  if (ingestPid !== null) process.kill(ingestPid, 'SIGCONT');
  bare.stop();
  table(rows);
  const rssMb = await peakRssPerProcessMb(capturePid);
  console.log(`capture peak RSS of its largest process: ${rssMb.toFixed(1)} MB`);
  return { results, rssMb };
}

let measured: Awaited<ReturnType<typeof measure>>;
try {
  measured = await measure();
} finally {
  await cleanUp();
}
const { results, rssMb } = measured;
const batch = results.get(runs[0]![0])!;
// The line compares like with like: the service's own port against the bare server's; with
// BENCH_FRONT_DOOR=1 the table above also gives the figures through nginx.
console.log(
  `RESULT capture_batch_events_per_s=${Math.round(batch.direct.requestsPerSecond * 100)} bare_events_per_s=${Math.round(batch.baseline.requestsPerSecond * 100)}` +
    ` ratio=${batch.ratio.toFixed(3)} p99_ms=${batch.direct.p99} rss_mb=${rssMb.toFixed(1)}`,
);
