/**
 * Decide throughput on decide's own port and through the front door: 50 active flags (rollouts,
 * person-property filters, multivariate, one group flag) and 10,000 persons with properties, each request for a random
 * person, and in the same run a bare Node server (bench/bare-server.ts, its own process) that
 * parses the same bodies and answers a fixed JSON of the same size (the baseline); both take the
 * same number of connections (default 8). Also times the pure engine on the same flag set.
 * Needs `make up`. Ends with one line, for the route that fares worse:
 * RESULT decide_req_per_s=... bare_req_per_s=... ratio=... p99_ms=... rss_mb=...
 * Each server is driven for a warm-up first (BENCH_WARMUP_SECONDS, default 10 s): definitions
 * loaded, connections open and code optimised in every worker, as in a server that has been up.
 * Then the bare server and decide's own port take turns (BENCH_ROUNDS, default 3, each turn
 * [seconds] long; see driveInTurns), and the ratio is the median of the rounds'.
 * Run: npx tsx bench/decide.ts [seconds per turn, 10] [connections, 8]
 */
import { loadConfig } from '@tributary/config';
import { FeatureFlagStore, PersonCache, type FeatureFlagInput } from '@tributary/control-plane';
import { evaluateFlag, type FlagDefinition } from '@tributary/flags';
import { createRedis } from '@tributary/redis';
import { createPool, createTestTenant } from '@tributary/test-support';
import { deleteBenchProjects, drive, driveInTurns, peakRssPerProcessMb, pidOf, startBareServer, table, type LoadResult } from './lib.js';

const seconds = Number(process.argv[2] ?? 10);
const connections = Number(process.argv[3] ?? 8);
const warmUpSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const persons = 10_000;
const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
const pool = createPool(config, { max: 4 });
const redis = createRedis(config);
const tenant = await createTestTenant(pool, config);
const team = tenant.project.id;

const PLANS = ['free', 'pro', 'enterprise'];
const COUNTRIES = ['GB', 'US', 'DE', 'FR', 'IN'];
const personProperties = (i: number) => ({ email: `user${i}@${i % 4 ? 'example.test' : 'acme.test'}`, plan: PLANS[i % 3], country: COUNTRIES[i % 5], age: 18 + (i % 60), beta: i % 7 === 0 });

function flagSet(): FeatureFlagInput[] {
  const flags: FeatureFlagInput[] = [];
  const flag = (key: string, filters: Record<string, unknown>) => flags.push({ key, name: key, filters, active: true, ensure_experience_continuity: false });
  for (let i = 0; i < 20; i++) flag(`rollout-${i}`, { groups: [{ properties: [], rollout_percentage: (i * 5) % 100 }] });
  const conditions = [
    { key: 'plan', value: ['pro', 'enterprise'], operator: 'exact', type: 'person' },
    { key: 'email', value: 'acme.test', operator: 'icontains', type: 'person' },
    { key: 'age', value: 40, operator: 'gt', type: 'person' },
    { key: 'country', value: '^(GB|DE)$', operator: 'regex', type: 'person' },
    { key: 'beta', value: ['true'], operator: 'exact', type: 'person' },
  ];
  for (let i = 0; i < 20; i++) flag(`targeted-${i}`, { groups: [{ properties: [conditions[i % conditions.length]], rollout_percentage: 50 + (i % 5) * 10 }, { properties: [conditions[(i + 1) % conditions.length]], rollout_percentage: 20 }] });
  for (let i = 0; i < 9; i++) {
    flag(`experiment-${i}`, { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] }, payloads: { test: '{"copy":"B"}' } });
  }
  flag('company-flag', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'seats', value: 10, operator: 'gte', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }] });
  return flags;
}

const store = new FeatureFlagStore(pool, redis);
const definitions = [];
for (const input of flagSet()) definitions.push(await store.create(team, input, tenant.user.id));
await pool.query('INSERT INTO group_type_mappings (team_id, group_type, group_type_index) VALUES ($1, $2, 0)', [team, 'company']);

// Persons as ingest leaves them: rows in Postgres and the Redis cache decide reads first.
const { rows: created } = await pool.query<{ id: number; uuid: string; i: number }>(
  `INSERT INTO persons (uuid, team_id, properties, is_identified, created_at)
   SELECT gen_random_uuid(), $1, p, true, now() FROM unnest($2::jsonb[]) WITH ORDINALITY AS t(p, i) ORDER BY i RETURNING id, uuid`,
  [team, Array.from({ length: persons }, (_, i) => JSON.stringify(personProperties(i)))],
);
await pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) SELECT $1, d, p FROM unnest($2::text[], $3::bigint[]) AS t(d, p)', [team, created.map((_, i) => `person-${i}`), created.map((row) => row.id)]);
const personCache = new PersonCache(redis);
await personCache.setMany(created.map((row, i) => ({ teamId: team, distinctIds: [`person-${i}`], person: { personId: Number(row.id), personUuid: row.uuid, properties: personProperties(i) } })));

const token = tenant.project.api_token;
const randomBody = () => {
  const i = Math.floor(Math.random() * persons);
  return JSON.stringify({ token, distinct_id: `person-${i}`, groups: { company: `co-${i % 50}` }, group_properties: { company: { seats: i % 30 } } });
};
const decidePid = await pidOf('decide');
const rows = [];
const results: { path: string; real: LoadResult; direct: LoadResult; baseline: LoadResult; ratio: number }[] = [];
for (const path of ['/decide/?v=3', '/flags/?v=2']) {
  const url = `${config.publicUrl}${path}`;
  const directUrl = `http://127.0.0.1:${config.decidePort}${path}`;
  await drive({ url: directUrl, body: randomBody(), nextBody: randomBody, connections, seconds: warmUpSeconds });
  const sample = await fetch(url, { method: 'POST', body: randomBody() });
  const bare = await startBareServer(await sample.text());
  await drive({ url: `${bare.url}${path}`, body: randomBody(), nextBody: randomBody, connections, seconds: Math.min(warmUpSeconds, 3) });
  const turns = await driveInTurns({
    rounds,
    baseline: { url: `${bare.url}${path}`, body: randomBody(), nextBody: randomBody, connections, seconds, serverPid: bare.pid },
    service: { url: directUrl, body: randomBody(), nextBody: randomBody, connections, seconds, serverPid: decidePid },
  });
  bare.stop();
  const { baseline, service: direct } = turns;
  const real = await drive({ url, body: randomBody(), nextBody: randomBody, connections, seconds });
  results.push({ path, real, direct, baseline, ratio: turns.ratio });
  rows.push({
    route: path,
    'req/s': real.requestsPerSecond,
    'p99 ms': real.p99,
    'non-2xx': real.non2xx + real.errors + direct.non2xx + direct.errors,
    'direct req/s': direct.requestsPerSecond,
    'direct p99 ms': direct.p99,
    'bare req/s': baseline.requestsPerSecond,
    'bare p99 ms': baseline.p99,
    'front door/bare': real.requestsPerSecond / baseline.requestsPerSecond,
    'direct/bare': turns.ratio,
    // CPU per request is steadier than req/s on a shared machine; the load generator's cores show
    // whether it, rather than the server, set the pace (1 would be its whole core).
    'direct CPU µs/req': direct.serverCpuUsPerRequest,
    'bare CPU µs/req': baseline.serverCpuUsPerRequest,
    'direct kernel µs/req': direct.serverKernelUsPerRequest,
    'bare kernel µs/req': baseline.serverKernelUsPerRequest,
    'loadgen cores direct': direct.loadGeneratorCores,
    'loadgen cores bare': baseline.loadGeneratorCores,
  });
}
table(rows);
const rssMb = await peakRssPerProcessMb(decidePid);
console.log(`decide peak RSS of its largest process: ${rssMb.toFixed(1)} MB`);

const flagsForEngine = definitions.map((d) => ({ ...d, filters: d.filters })) as unknown as FlagDefinition[];
const engineStart = process.hrtime.bigint();
let evaluations = 0;
for (let i = 0; i < 20_000; i++) {
  const context = { distinctId: `person-${i % persons}`, personProperties: personProperties(i % persons), groups: { company: `co-${i % 50}` }, groupProperties: { company: { seats: i % 30 } }, groupTypeMapping: { 0: 'company' }, now: new Date() };
  for (const flag of flagsForEngine) {
    evaluateFlag(flag, context);
    evaluations++;
  }
}
const engineSeconds = Number(process.hrtime.bigint() - engineStart) / 1e9;
console.log(`pure engine: ${Math.round(evaluations / engineSeconds)} flag evaluations/s (${flagsForEngine.length} flags, ${Math.round(evaluations / flagsForEngine.length / engineSeconds)} full flag sets/s)`);
// The project was only there to be asked about: its 10,000 persons, in Postgres and in decide's
// cache, would otherwise pile up with every run (as bench/ingest.ts's do not either).
await deleteBenchProjects(pool, personCache, [team]);
redis.disconnect();
await pool.end();
// The route that fares worse speaks for both; like with like: decide's own port against the
// bare server's (the table above also gives the figures through nginx).
const worst = results.reduce((a, b) => (b.ratio < a.ratio ? b : a));
console.log(
  `RESULT decide_req_per_s=${Math.round(worst.direct.requestsPerSecond)} bare_req_per_s=${Math.round(worst.baseline.requestsPerSecond)}` +
    ` ratio=${worst.ratio.toFixed(3)} p99_ms=${Math.max(...results.map((r) => r.direct.p99))} rss_mb=${rssMb.toFixed(1)}`,
);
