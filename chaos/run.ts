import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@tributary/config';
import { createClickHouse } from '@tributary/clickhouse';
import { ControlPlaneStore } from '@tributary/control-plane';
import { createPool, type Pool } from '@tributary/postgres';
import { prepareHostileInput } from './hostile/hostile-input.js';
import { keyIssuerFor } from './hostile/key-issuer.js';
import { ATTACKS, runHostileTenant } from './hostile-tenant.js';
import { readStackCredentials } from './state-dir.js';
import { LoadGenerator } from './load-generator.js';
import { DecideProbe, ReadinessSampler } from './observers.js';
import { CLUSTER_SCENARIOS } from './cluster-scenarios.js';
import { SCENARIOS, type ChaosContext, type ScenarioOutcome } from './scenarios.js';
import { Stack, type Service } from './stack.js';
import { drainOutbox, locateInKafka, settle, verify } from './verify.js';

/**
 * `make chaos`: under continuous SDK-like load, kills every service with SIGKILL and takes every
 * store away in turn, throws hostile input at every route, then checks that every acknowledged
 * event is stored exactly once and every identity sequence merged. `infra/chaos/run.sh` brings up
 * the isolated stack this runs against. Ends with one RESULT line; exits non-zero on any loss,
 * duplicate, unexpected 5xx or crash, and on any other broken expectation (printed above it).
 */

const started = Date.now();
const log = (line: string) => console.log(`[chaos +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

const config = loadConfig();
const stateDir = process.env.TRIBUTARY_STATE_DIR ?? '.tributary';
const credentials = await readStackCredentials(stateDir);
const frontUrl = config.publicUrl;
const projectId = Number(credentials.TRIBUTARY_PROJECT_ID);
const projectApiKey = credentials.TRIBUTARY_PROJECT_API_KEY;
const personalApiKey = credentials.TRIBUTARY_PERSONAL_API_KEY;
const api = { frontUrl, projectId, personalApiKey };
const clickhouse = createClickHouse(config);
const runId = `chaos${started.toString(36)}`;

/** A flag any request can compute, and one that needs the person's stored properties. */
async function createFlags(): Promise<void> {
  const flags = [
    { key: 'chaos-rollout', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } },
    { key: 'chaos-email', filters: { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@' }], rollout_percentage: 100 }] } },
  ];
  for (const flag of flags) {
    const response = await fetch(`${frontUrl}/api/projects/${projectId}/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...flag, name: flag.key, active: true }),
    });
    if (!response.ok) throw new Error(`creating flag ${flag.key}: ${response.status} ${await response.text()}`);
  }
}

/** A person decide has computed flags for, so it is in the person cache before Postgres goes away. */
async function knownPerson(decide: DecideProbe): Promise<void> {
  const body = { api_key: projectApiKey, event: '$identify', distinct_id: `${runId}-known`, properties: { $set: { email: `known@${runId}.example` } } };
  const response = await fetch(`${frontUrl}/capture/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`capturing the known person: ${response.status}`);
  for (let i = 0; i < 120; i++) {
    if ((await decide.ask(`${runId}-known`)).flags?.['chaos-email'] === true) return;
    await sleep(500);
  }
  throw new Error('decide never saw the known person');
}

/**
 * A project of the demo organization for the hostile phase: what it captures stays out of the
 * load's project, whose acknowledged events are counted, and its reads do not filter the load's
 * hundreds of thousands of events (those made each events-list case take seconds).
 */
async function hostileProject(pool: Pool, name = 'hostile input'): Promise<{ id: number; api_token: string }> {
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  const demo = await store.findProject(projectId);
  if (!demo) throw new Error(`project ${projectId} of the credentials file does not exist`);
  return store.createProject(demo.organization_id, `chaos ${name} ${runId}`);
}

/** Events for the hostile tenant's queries to work on: people taking twenty steps, with browsers to break down by. */
async function attackerEvents(token: string): Promise<void> {
  const batch = Array.from({ length: 2000 }, (_, i) => ({
    event: `step-${i % 20}`,
    distinct_id: `attacker-${Math.floor(i / 20)}`,
    timestamp: new Date(Date.now() - (2000 - i) * 1000).toISOString(),
    properties: { $browser: `browser-${i % 7}` },
  }));
  const response = await fetch(`${frontUrl}/batch/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: token, batch }) });
  if (!response.ok) throw new Error(`capturing the hostile tenant's events: ${response.status}`);
}

/** How long one project sends the heaviest queries while another's keep answering. */
const HOSTILE_TENANT_MS = 60_000;

const SERVICES: Service[] = ['capture', 'ingest', 'decide', 'api', 'worker'];

/** Hostile requests in flight at once: more takes the CPU the restarted services need to start, and the faults last longer. */
const HOSTILE_CONCURRENCY = 6;
/** After a scenario ends (its service answers, its events are queryable), the rest of the stack settles too: answers within this are still the fault's. */
const FAULT_GRACE_MS = 5000;

/** When faults were on, each from its scenario's start to `FAULT_GRACE_MS` after its end. */
class FaultWindows {
  private readonly windows: { from: number; to: number }[] = [];
  private openSince: number | null = null;

  async during<T>(work: () => Promise<T>): Promise<T> {
    this.openSince = Date.now();
    try {
      return await work();
    } finally {
      this.windows.push({ from: this.openSince, to: Date.now() + FAULT_GRACE_MS });
      this.openSince = null;
    }
  }

  readonly overlaps = (from: number, to: number): boolean =>
    (this.openSince !== null && to >= this.openSince) || this.windows.some((w) => from <= w.to && to >= w.from);
}

async function main(): Promise<number> {
  const stack = new Stack(config, log);
  const decide = new DecideProbe(frontUrl, projectApiKey, `${runId}-known`);
  const readiness = new ReadinessSampler(stack, () => SERVICES);
  const load = new LoadGenerator({ frontUrl, apiKey: projectApiKey, senders: 6, eventsPerSecond: 200, runId, log });
  const context: ChaosContext = { stack, load, readiness, decide, clickhouse, api, projectApiKey, log };
  const faults = new FaultWindows();

  await createFlags();
  await knownPerson(decide);
  await stack.startWatching(SERVICES);
  readiness.start();
  decide.start();
  load.start();
  log('load running; warming up while the hostile input is prepared');

  // Hostile input runs beside the faults: the machine mostly waits for processes to restart and
  // stores to come back, and its answers while a fault is on may be JSON 503s (see `outage`).
  const pool = createPool(config, { max: 1 });
  const hostileTarget = await hostileProject(pool);
  const keys = await keyIssuerFor(config, personalApiKey);
  const attackerProject = await hostileProject(pool, 'hostile tenant');
  await attackerEvents(attackerProject.api_token);
  const attackerKey = await keys.issue(`hostile tenant ${runId}`.slice(0, 40), ['*'], [attackerProject.id]);
  const [hostileRun] = await Promise.all([
    prepareHostileInput({ frontUrl, projectId: hostileTarget.id, projectApiKey: hostileTarget.api_token, personalApiKey, keys }, { log, concurrency: HOSTILE_CONCURRENCY, outage: faults.overlaps }),
    sleep(10_000),
  ]);
  log(`scenario: hostile input on every route (${hostileRun.requests} requests), beside the faults`);
  const hostileStarted = Date.now();
  const hostileSent = hostileRun.send();

  const outcomes: ScenarioOutcome[] = [];
  for (const scenario of config.clickhouseCluster === '' ? SCENARIOS : CLUSTER_SCENARIOS) {
    log(`scenario: ${scenario.name}`);
    const outcome = await faults.during(() => scenario.run(context));
    log(`  recovered in ${outcome.recoveryMs === null ? 'never' : `${outcome.recoveryMs} ms`}${outcome.failures.map((f) => `\n  FAILED: ${f}`).join('')}`);
    outcomes.push(outcome);
    await sleep(FAULT_GRACE_MS);
  }

  const hostile = await hostileSent;
  await hostileRun.teardown();
  outcomes.push({
    name: `hostile input (${hostile.requests} requests, ${hostile.outage503} JSON 503s during faults, ${hostile.staleConnections.length} sent again on a new connection)`,
    recoveryMs: null,
    failures: [
      ...(hostile.unexpected5xx > 0 ? [`${hostile.unexpected5xx} answers were 5xx or none`] : []),
      ...(hostile.non_json_4xx > 0 ? [`${hostile.non_json_4xx} 4xx answers had no JSON body naming the problem`] : []),
      ...hostile.failures.slice(0, 10).map((f) => `${f.method} ${f.path} (${f.case}): ${f.status} ${f.body.slice(0, 200)}`),
    ],
  });
  log(`  ${hostile.requests} hostile requests in ${((Date.now() - hostileStarted) / 1000).toFixed(0)} s`);

  log('scenario: a hostile tenant');
  const tenant = await runHostileTenant({
    frontUrl,
    attacker: { id: attackerProject.id, personalApiKey: attackerKey.value },
    victim: { id: projectId, personalApiKey },
    victimMarker: runId,
    clickhouse,
    durationMs: HOSTILE_TENANT_MS,
    concurrency: config.queryConcurrencyPerProject + 1,
    log,
  });
  await keys.revoke(attackerKey.id);
  await keys.close();
  log(`  attacker: ${tenant.attackerQueries} queries (${Object.entries(tenant.attackerStatuses).map(([s, n]) => `${s}:${n}`).join(' ')}); victim: ${tenant.victimQueries} queries, p95 ${tenant.victimP95Ms} ms`);
  outcomes.push({
    name: `a hostile tenant (${ATTACKS.length} heavy and escaping queries, ${tenant.attackerQueries} sent; the other project's p95 ${tenant.victimP95Ms} ms)`,
    recoveryMs: null,
    failures: [
      ...tenant.leaks.slice(0, 5).map((l) => `the other project's rows in an answer: ${l}`),
      ...tenant.attacker5xx.slice(0, 5).map((l) => `5xx: ${l}`),
      ...tenant.victimFailures.slice(0, 5).map((l) => `the other project's query: ${l}`),
      ...(tenant.clickhouseRestarts > 0 ? [`ClickHouse restarted ${tenant.clickhouseRestarts} times`] : []),
    ],
  });

  log('stopping the load');
  await load.stop();
  decide.stop();
  readiness.stop();
  log(`${load.acked.size} events acknowledged; waiting for ingest to settle`);
  await settle(clickhouse, projectId, load.acked.size, log);
  await drainOutbox(pool, log);
  await pool.end();
  stack.stopWatching();
  const verdict = await verify(clickhouse, api, load.acked, load.abandoned, load.completedSequences);
  for (const note of verdict.notes) log(note);
  const located = await locateInKafka(config, verdict.lost.slice(0, 100));
  if (!located.complete) log('Kafka not read to its end within a minute: a lost uuid said to be in no message may be in one');
  for (const [uuid, where] of located.found) {
    // Lost uuids are acknowledged ones, each with the time of its 200.
    const ackedAt = load.acked.get(uuid)!;
    log(`lost ${uuid}: acknowledged at +${((ackedAt - started) / 1000).toFixed(1)}s, ${where === null ? 'in no Kafka message' : `in Kafka at ${where}`}`);
  }

  const decide5xx = [...decide.answers.known, ...decide.answers.fresh].filter((a) => a.status >= 500 && !(a.status === 503 && a.jsonError));
  const load5xx = load.unexpected.filter((r) => r.status >= 500);
  const otherLoadFailures = load.unexpected.filter((r) => r.status < 500);
  const unexpected5xx = load5xx.length + decide5xx.length + hostile.unexpected5xx + tenant.attacker5xx.length;

  console.log('\n| scenario | recovery | result |\n|---|---|---|');
  for (const o of outcomes) console.log(`| ${o.name} | ${o.recoveryMs === null ? '–' : `${(o.recoveryMs / 1000).toFixed(1)} s`} | ${o.failures.length === 0 ? 'ok' : o.failures.join('; ')} |`);
  console.log(`\n${verdict.personFailures.length === 0 ? 'all' : 'NOT all'} ${load.completedSequences.length} identity sequences merged correctly`);

  const problems = [
    ...outcomes.flatMap((o) => o.failures.map((f) => `${o.name}: ${f}`)),
    ...verdict.personFailures.slice(0, 20),
    ...otherLoadFailures.slice(0, 20).map((r) => `load: ${r.path} answered ${r.status === 0 ? 'nothing' : r.status}`),
    ...load5xx.slice(0, 20).map((r) => `load: ${r.path} answered ${r.status}${r.jsonError ? '' : ' without a JSON body'}`),
    ...decide5xx.slice(0, 5).map((a) => `decide: answered ${a.status}`),
    ...verdict.lost.slice(0, 10).map((uuid) => `lost: ${uuid}`),
    ...verdict.duplicated.slice(0, 10).map((uuid) => `duplicated: ${uuid}`),
    ...stack.crashes.map((service) => `crash: ${service}`),
  ];
  for (const problem of problems) console.log(`PROBLEM ${problem}`);
  console.log(
    `RESULT acked=${load.acked.size} lost=${verdict.lost.length} duplicated=${verdict.duplicated.length} hostile_requests=${hostile.requests} ` +
      `unexpected_5xx=${unexpected5xx} crashes=${stack.crashes.length} scenarios=${outcomes.length} ` +
      `hostile_tenant_queries=${tenant.attackerQueries} tenant_leaks=${tenant.leaks.length} victim_failures=${tenant.victimFailures.length} victim_p95_ms=${tenant.victimP95Ms} clickhouse_restarts=${tenant.clickhouseRestarts}`,
  );
  return problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
