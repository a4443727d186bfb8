/**
 * Capture throughput against the real broker, through the front door and on capture's own port,
 * and in the same run a bare Node HTTP server (bench/bare-server.ts, its own process) that only
 * reads and parses the same bodies (the baseline, reached directly like capture's port). Needs `make up`.
 * The ingest consumer is paused (SIGSTOP) while it runs, so that draining the flood into Postgres
 * and ClickHouse does not compete with capture for this machine's two cores; it resumes after.
 * A copy of capture started with its own TRIBUTARY_STATE_DIR has no ingest there, so nothing is
 * paused; BENCH_FRONT_DOOR=0 skips the runs through nginx, which reach `make up`'s capture, not the copy.
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
import { loadConfig } from '@tributary/config';
import { readCredentialsOrExit, realisticEvent } from './events.js';
import { drive, driveInTurns, peakRssPerProcessMb, pidOf, startBareServer, table, type LoadResult } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.argv[3] ?? 16);
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const credentials = await readCredentialsOrExit();
const serviceUrl = `http://127.0.0.1:${loadConfig().capturePort}`;
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

const bare = await startBareServer('{"status":1}');

const frontDoor = process.env.BENCH_FRONT_DOOR !== '0';
const runs: [string, string, ReturnType<typeof inTurn>, number][] = [
  ['/batch/ (100 events)', '/batch/', batchBodies, 100],
  ['/capture/ (1 event)', '/capture/', singleBodies, 1],
];
const rows = [];
const capturePid = await pidOf('capture');
// Only `make up`'s state dir has an ingest to pause: a copy's dir has no pid file for it.
const ingestPid = await pidOf('ingest').catch(() => null);
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
const batch = results.get(runs[0]![0])!;
// The line compares like with like: the service's own port against the bare server's; the
// table above also gives the figures through nginx.
console.log(
  `RESULT capture_batch_events_per_s=${Math.round(batch.direct.requestsPerSecond * 100)} bare_events_per_s=${Math.round(batch.baseline.requestsPerSecond * 100)}` +
    ` ratio=${batch.ratio.toFixed(3)} p99_ms=${batch.direct.p99} rss_mb=${rssMb.toFixed(1)}`,
);
