import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ident, sql, type ClickHouse } from '@tributary/clickhouse';
import type { LoadGenerator } from './load-generator.js';
import type { DecideProbe, ReadinessSampler } from './observers.js';
import type { Service, Stack, Store } from './stack.js';
import { findDeadLetters, getJson, type ApiTarget } from './verify.js';

/**
 * The faults, each applied under the running load. A scenario returns how long the system took
 * to recover once the fault ended (until an event captured after that moment could be queried,
 * or the killed service answered again) and every expectation the fault broke.
 */

export interface ChaosContext {
  stack: Stack;
  load: LoadGenerator;
  readiness: ReadinessSampler;
  decide: DecideProbe;
  clickhouse: ClickHouse;
  api: ApiTarget;
  projectApiKey: string;
  log: (line: string) => void;
}

export interface ScenarioOutcome {
  name: string;
  recoveryMs: number | null;
  failures: string[];
}

export interface Scenario {
  name: string;
  run(context: ChaosContext): Promise<ScenarioOutcome>;
}

export const RECOVERY_LIMIT_MS = 120_000;
/** A supervisor (systemd, Kubernetes) takes a moment to notice a dead process and start it again. */
export const SUPERVISOR_DELAY_MS = 2000;
const STORE_OUTAGE_MS = 20_000;
const CAPTURE_RECOVERY_AIM_MS = 10_000;

/** The canary's person: every canary goes to the same partition, after whatever that partition holds. */
const CANARY_DISTINCT_ID = 'chaos-canary';

/** Sends one event of the canary's person through capture, again and again until a 200, and counts it acknowledged. */
async function captureAcked(context: ChaosContext, event: string, since: number): Promise<string> {
  const uuid = randomUUID();
  const body = JSON.stringify({ api_key: context.projectApiKey, event, distinct_id: CANARY_DISTINCT_ID, uuid, properties: { since } });
  while (Date.now() - since < RECOVERY_LIMIT_MS) {
    const response = await fetch(`${context.api.frontUrl}/capture/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch(() => null);
    await response?.arrayBuffer();
    if (response?.status === 200) break;
    await sleep(250);
  }
  context.load.acked.set(uuid, Date.now());
  return uuid;
}

/**
 * Sends one event through capture (again and again until a 200) and waits until ClickHouse
 * holds it: the whole pipeline works again. Returns when it became queryable.
 */
async function canary(context: ChaosContext, since: number): Promise<number | null> {
  const uuid = await captureAcked(context, 'chaos canary', since);
  while (Date.now() - since < RECOVERY_LIMIT_MS) {
    const [row] = await context.clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM events WHERE team_id = ${context.api.projectId} AND uuid = toUUID(${uuid})`).catch(() => []);
    if (Number(row?.n ?? 0) > 0) return Date.now();
    await sleep(250);
  }
  return null;
}

export async function pipelineRecovery(context: ChaosContext, name: string, since: number, failures: string[]): Promise<ScenarioOutcome> {
  const at = await canary(context, since);
  if (at === null) failures.push(`events did not reach ClickHouse within ${RECOVERY_LIMIT_MS / 1000}s of the fault ending`);
  return { name, recoveryMs: at === null ? null : at - since, failures };
}

export async function until(check: () => Promise<boolean>, since: number): Promise<number | null> {
  while (Date.now() - since < RECOVERY_LIMIT_MS) {
    if (await check()) return Date.now();
    await sleep(200);
  }
  return null;
}

function killService(service: Service, answers: (context: ChaosContext) => Promise<boolean>): Scenario {
  const name = `kill -9 ${service}`;
  return {
    name,
    async run(context) {
      await context.stack.kill(service);
      await sleep(SUPERVISOR_DELAY_MS);
      const since = Date.now();
      await context.stack.start(service);
      const at = await until(() => answers(context), since);
      return { name, recoveryMs: at === null ? null : at - since, failures: at === null ? [`${service} did not answer again`] : [] };
    },
  };
}

const killCapture: Scenario = {
  name: 'kill -9 capture',
  async run(context) {
    await context.stack.kill('capture');
    await sleep(SUPERVISOR_DELAY_MS);
    const since = Date.now();
    await context.stack.start('capture');
    return pipelineRecovery(context, this.name, since, []);
  },
};

const killIngestRepeatedly: Scenario = {
  name: 'kill -9 ingest mid-batch (3 times)',
  async run(context) {
    let since = Date.now();
    for (let i = 0; i < 3; i++) {
      // Under the running load ingest is always inside some batch; a random moment lands anywhere in it.
      await sleep(2000 + Math.random() * 4000);
      await context.stack.kill('ingest');
      await sleep(500);
      since = Date.now();
      await context.stack.start('ingest');
    }
    return pipelineRecovery(context, this.name, since, []);
  },
};

async function ok(url: string, personalApiKey?: string): Promise<boolean> {
  if (personalApiKey) return getJson(url, personalApiKey).then(() => true, () => false);
  const response = await fetch(url, { signal: AbortSignal.timeout(3000) }).catch(() => null);
  await response?.arrayBuffer();
  return response?.ok === true;
}

const killDecide = killService('decide', async (context) => (await context.decide.ask('chaos-after-kill')).status === 200);
const killApi = killService('api', (context) => ok(`${context.api.frontUrl}/api/projects/${context.api.projectId}/events/?limit=1`, context.api.personalApiKey));
const killWorker = killService('worker', (context) => context.stack.ready('worker'));

/** The services that cannot work without the store: their `/_ready` must answer 503 while it is away. */
const REQUIRED_BY: Record<Store, Service[]> = {
  kafka: ['capture', 'ingest'],
  clickhouse: ['ingest', 'api'],
  postgres: ['ingest', 'api'],
  redis: ['worker'],
};

/**
 * Every service that checks the store must name it unavailable during the outage, those that
 * need it must also say "not ready", and all must say "ready" again once it is back.
 */
function readinessFailures(context: ChaosContext, store: Store, o: Outage): string[] {
  const failures: string[] = [];
  for (const service of context.readiness.checking(store)) {
    if (!context.readiness.reportedAway(service, store, o.from, o.to)) failures.push(`${service}'s /_ready never named ${store} unavailable while it was away`);
  }
  for (const service of REQUIRED_BY[store]) {
    if (!context.readiness.wasUnready(service, o.from, o.to)) failures.push(`${service}'s /_ready never said "not ready" while ${store} was away`);
  }
  return failures;
}

function readyAgainFailures(context: ChaosContext, store: Store, since: number): string[] {
  return context.readiness
    .checking(store)
    .filter((service) => context.readiness.readyAgainAt(service, since) === undefined)
    .map((service) => `${service}'s /_ready did not say "ready" again after ${store} returned`);
}

interface Outage {
  /** When the store was stopped, when it was started again, and when it was up. */
  from: number;
  to: number;
  since: number;
}

async function outage(context: ChaosContext, store: Store, outageMs: number): Promise<Outage> {
  const from = Date.now();
  await context.stack.stopStore(store);
  await sleep(outageMs);
  const to = Date.now();
  await context.stack.startStore(store);
  return { from, to, since: Date.now() };
}

/**
 * A store away for a while: its dependents say so on `/_ready`, nothing crashes, the pipeline
 * carries events again by itself once it is back, and the dependents say "ready" again.
 */
function storeOutage(name: string, store: Store, outageMs: number, extraChecks: (context: ChaosContext, outage: Outage) => string[] = () => []): Scenario {
  return {
    name,
    async run(context) {
      const o = await outage(context, store, outageMs);
      const outcome = await pipelineRecovery(context, name, o.since, [...readinessFailures(context, store, o), ...extraChecks(context, o)]);
      // The sampler needs a moment after the pipeline recovered to see every service ready.
      await sleep(2000);
      outcome.failures.push(...readyAgainFailures(context, store, o.since));
      return outcome;
    },
  };
}

/** Capture must say 503 (never 200 for events Kafka did not take) and take events again within 10 s. */
function captureDuringKafkaOutage(context: ChaosContext, o: Outage): string[] {
  const failures: string[] = [];
  const during = context.load.responses.filter((r) => r.at >= o.from + 2000 && r.done <= o.to);
  if (!during.some((r) => r.status === 503 && r.jsonError)) failures.push('capture never answered a JSON 503 while Kafka was away');
  return failures;
}

/** The api's produce timeout (KAFKA_PRODUCE_TIMEOUT_MS, at its default here) and a margin for the request itself. */
const PERSON_CHANGE_LIMIT_MS = 10_000 + 3_000;

/**
 * Person changes made through the api while Kafka is away, several at once: each must be answered
 * (a JSON 503 saying to retry, or a 200) within the produce timeout. Sent one at a time by the
 * api's producer, each had waited for every failing send before it, for a minute and more.
 */
async function personChangesDuringOutage(context: ChaosContext, personId: string): Promise<string[]> {
  const { frontUrl, projectId, personalApiKey } = context.api;
  const change = async (n: number) => {
    const started = Date.now();
    const response = await fetch(`${frontUrl}/api/projects/${projectId}/persons/${personId}/`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { chaos_change: n } }),
      signal: AbortSignal.timeout(120_000),
    }).catch((error: unknown) => error as Error);
    const ms = Date.now() - started;
    if (response instanceof Error) return `a person change sent while Kafka was away failed after ${ms} ms: ${response.message}`;
    const body: unknown = await response.json().catch(() => null);
    if (body === null) return `a person change sent while Kafka was away answered ${response.status} without the JSON error shape`;
    if (![200, 503].includes(response.status)) return `a person change sent while Kafka was away answered ${response.status}: ${JSON.stringify(body).slice(0, 200)}`;
    return ms > PERSON_CHANGE_LIMIT_MS ? `a person change sent while Kafka was away took ${ms} ms to answer (aim: ${PERSON_CHANGE_LIMIT_MS} ms)` : null;
  };
  const outcomes = await Promise.all([1, 2, 3, 4].map(change));
  return outcomes.filter((failure): failure is string => failure !== null);
}

/** A distinct id the load never sends: its person is merged into no other while the scenario changes it. */
const PERSON_CHANGE_DISTINCT_ID = 'chaos-person-change';

/**
 * A person for the changes made while Kafka is away, made by capture and read back through the api.
 * One of the load's persons may have been merged away in Postgres before its ClickHouse copy says
 * so, and a change to it is then rightly a 404.
 */
async function personOfItsOwn(context: ChaosContext): Promise<{ id: string } | undefined> {
  const { frontUrl, projectId, personalApiKey } = context.api;
  await fetch(`${frontUrl}/e/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: context.projectApiKey, event: '$identify', distinct_id: PERSON_CHANGE_DISTINCT_ID, properties: { $set: { chaos_change: 0 } } }),
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { results } = (await getJson(`${frontUrl}/api/projects/${projectId}/persons/?distinct_id=${PERSON_CHANGE_DISTINCT_ID}`, personalApiKey)) as { results: { id: string }[] };
    if (results[0]) return results[0];
    await sleep(500);
  }
  return undefined;
}

const kafkaOutage: Scenario = {
  name: `kafka stopped for ${STORE_OUTAGE_MS / 1000} s`,
  async run(context) {
    const scenario = storeOutage(this.name, 'kafka', STORE_OUTAGE_MS, captureDuringKafkaOutage);
    const person = await personOfItsOwn(context);
    const started = Date.now();
    const personChanges = person ? sleep(2000).then(() => personChangesDuringOutage(context, String(person.id))) : Promise.resolve(['no person to change through the api']);
    const outcome = await scenario.run(context);
    outcome.failures.push(...(await personChanges));
    // Capture's clock starts when the broker answers requests again (see `Stack.startStore`).
    const back = context.stack.lastStoreStart('kafka', started);
    const captureBack = back === undefined ? undefined : context.load.firstOkAfter(back);
    if (back === undefined || captureBack === undefined || captureBack - back > CAPTURE_RECOVERY_AIM_MS) {
      outcome.failures.push(`capture took ${captureBack === undefined || back === undefined ? 'more than the run' : `${captureBack - back} ms`} to answer 200 again after Kafka returned (aim: 10 s)`);
    }
    return outcome;
  },
};

/**
 * Longer than a producer goes on retrying, so that sends fail after the broker wrote them: the
 * failure that left kafkajs's batch numbering behind the broker's, after which the broker took
 * the next batch for a retry and acknowledged it without writing it (RenewingProducer).
 */
const ANSWERS_LOST_MS = 15_000;

const kafkaAnswersLost: Scenario = {
  name: `Kafka's answers lost for ${ANSWERS_LOST_MS / 1000} s (the broker writes, the client never hears)`,
  async run(context) {
    await context.stack.loseKafkaAnswers(true);
    await sleep(ANSWERS_LOST_MS);
    await context.stack.loseKafkaAnswers(false);
    return pipelineRecovery(context, this.name, Date.now(), []);
  },
};

/** Decide answers from what it holds: flags for a person it has seen, an honest error flag for one it cannot read. */
function decideFromCache(context: ChaosContext, { from, to }: Outage): string[] {
  const failures: string[] = [];
  const known = context.decide.between('known', from + 1000, to);
  const fresh = context.decide.between('fresh', from + 1000, to);
  if (known.length === 0) failures.push('no decide answers were recorded while Postgres was away');
  const knownBad = known.filter((a) => a.status !== 200 || a.flags?.['chaos-email'] !== true);
  if (knownBad.length > 0) failures.push(`${knownBad.length} of ${known.length} decide answers for a cached person were not computed from cache (first: ${JSON.stringify(knownBad[0])})`);
  const freshBad = fresh.filter((a) => a.status !== 200 || (a.errorsWhileComputingFlags !== true && a.flags?.['chaos-email'] !== false));
  if (freshBad.length > 0) failures.push(`${freshBad.length} of ${fresh.length} decide answers for an unreadable person were neither computed nor marked errorsWhileComputingFlags (first: ${JSON.stringify(freshBad[0])})`);
  return failures;
}

const postgresOutage = storeOutage('postgres restarted (down 10 s)', 'postgres', 10_000, decideFromCache);

const redisRestart: Scenario = {
  name: 'redis restarted and flushed',
  async run(context) {
    const o = await outage(context, 'redis', 3000);
    const outcome = await pipelineRecovery(context, this.name, o.since, readinessFailures(context, 'redis', o));
    const decideBack = await until(async () => (await context.decide.ask('chaos-after-redis')).status === 200, o.since);
    if (decideBack === null) outcome.failures.push('decide did not answer after Redis came back');
    await sleep(2000);
    outcome.failures.push(...readyAgainFailures(context, 'redis', o.since));
    return outcome;
  },
};

/** Two ingest processes share the partitions; one dies while identity sequences merge persons. */
export const replicaKilledDuringMerges: Scenario = {
  name: 'two ingest processes, one killed during merges',
  async run(context) {
    await context.stack.start('ingest-2');
    // Let the consumer group hand partitions to the second process and both work a while.
    await sleep(10_000);
    await context.stack.kill('ingest');
    await sleep(SUPERVISOR_DELAY_MS);
    const since = Date.now();
    await context.stack.start('ingest');
    const outcome = await pipelineRecovery(context, this.name, since, []);
    await sleep(5000);
    await context.stack.stop('ingest-2');
    return outcome;
  },
};

const REFUSED_EVENT = 'chaos refused by a view';
const REFUSED_EVENTS = 5;

/**
 * A materialized view on `events` that throws for some events' rows, as a view an operator adds
 * may: ClickHouse then refuses every insert that holds one. Ingest must leave those rows out, send
 * each to the dead-letter topic, and go on: the canary, sent after them on their partition, must
 * arrive. (ClickHouse writes a table before its views, so the refused rows are stored as well,
 * and the end of the run finds them stored once like any other.)
 */
const viewRefusesRows: Scenario = {
  name: `a ClickHouse view refuses ${REFUSED_EVENTS} events' rows under the load`,
  async run(context) {
    const view = `chaos_refusing_view_${Date.now()}`;
    await context.clickhouse.command(sql`CREATE MATERIALIZED VIEW ${ident(view)} ENGINE = Null AS SELECT throwIf(event = ${REFUSED_EVENT}) AS refused FROM events`);
    const failures: string[] = [];
    let outcome: ScenarioOutcome;
    try {
      const refused: string[] = [];
      for (let i = 0; i < REFUSED_EVENTS; i++) {
        refused.push(await captureAcked(context, REFUSED_EVENT, Date.now()));
        await sleep(1000);
      }
      outcome = await pipelineRecovery(context, this.name, Date.now(), failures);
      // The canary can be stored before the last refused row's dead letter is sent: chunks that
      // shared a refused insert are each written again alone, the canary's at once, the refused
      // row's after it is found. The view stays until then, or the row would be taken after all.
      const deadline = Date.now() + RECOVERY_LIMIT_MS;
      let { found, complete } = await findDeadLetters(context.stack.config, refused);
      while ([...found.values()].includes(null) && Date.now() < deadline) {
        // Each look reads the topic from its start, in a consumer group of its own.
        await sleep(5000);
        ({ found, complete } = await findDeadLetters(context.stack.config, refused));
      }
      for (const [uuid, letter] of found) {
        if (letter === null) failures.push(`the refused row of ${uuid} is not in the dead-letter topic${complete ? '' : ' (not read to its end within a minute)'}`);
        else if (letter.headers.clickhouse_table !== 'events' || !/^ClickHouse refused the row: Code: 395/.test(letter.headers.reason ?? '')) {
          failures.push(`the dead letter of ${uuid} does not say ClickHouse refused its events row: ${JSON.stringify(letter.headers)}`);
        }
      }
    } finally {
      await context.clickhouse.command(sql`DROP TABLE IF EXISTS ${ident(view)}`);
    }
    return outcome;
  },
};

/**
 * Ingest's kills come early: one killed between its Postgres commit and its ClickHouse insert
 * leaves person copies in the outbox for a minute, which the end of the run waits out.
 */
export const SCENARIOS: Scenario[] = [
  killCapture,
  killIngestRepeatedly,
  replicaKilledDuringMerges,
  killDecide,
  killApi,
  killWorker,
  kafkaOutage,
  kafkaAnswersLost,
  storeOutage(`clickhouse stopped for ${STORE_OUTAGE_MS / 1000} s`, 'clickhouse', STORE_OUTAGE_MS),
  viewRefusesRows,
  postgresOutage,
  redisRestart,
];
