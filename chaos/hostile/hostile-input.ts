/**
 * The hostile-input generator (issue #14): at least 10,000 malformed requests through the nginx
 * front door to every public and management route the running system mounts, reproducible from a
 * seed. Passing means no 5xx (the stores are up), every 4xx in the one JSON error shape naming
 * the problem, and every request answered. `chaos/hostile-input.ts` runs it from the command
 * line; the chaos suite runs it beside its faults.
 */
import http from 'node:http';
import { casesFor, randomCasesFor, type HostileCase } from './cases.js';
import { emptyCreated, setUp, type Created, type Target } from './fixtures.js';
import { frontDoorCases, type RawCase } from './front-door.js';
import { canonicalRoute, onAlias, operationsOf, routeKey } from './routes.js';
import { isErrorShape, judge, sendHttp, sendRaw, type Answer } from './send.js';

export type { Target } from './fixtures.js';

export interface HostileOptions {
  /** At least this many requests (default 10,000); systematic cases may take it over. */
  minRequests?: number;
  /** Requests in flight at once (default 6: the machine is shared with the stores). */
  concurrency?: number;
  /** Seed of the random mutations (default 14): the same seed sends the same requests. */
  seed?: number;
  /** Only the cases whose name starts with one of these (`query where`, `body deep`, `raw`...), to replay one family against a store and watch it. */
  only?: readonly string[];
  /**
   * Whether a fault the caller caused (a store stopped, a service killed) overlapped the time
   * from `from` to `to`: a JSON 503 then is the outage's answer, which clients retry, not a finding.
   */
  outage?: (from: number, to: number) => boolean;
  log?: (line: string) => void;
}

export interface HostileFailure {
  route: string;
  method: string;
  path: string;
  status: number;
  body: string;
  case: string;
}

export interface HostileResult {
  requests: number;
  /** Answers with a 5xx, and requests that got no answer at all (status 0: reset or timed out). */
  unexpected5xx: number;
  /** JSON 503s answered while a fault of the caller's was on (see `outage`): expected, so not findings. */
  outage503: number;
  /** Requests whose pooled connection was found closed, sent again on a new one: each with what the connection carried before. */
  staleConnections: string[];
  non_json_4xx: number;
  /** Per route: requests, answers by status (`no_response` when none came), and the seconds they took in all. */
  byRoute: Record<string, { requests: number; status: Record<string, number>; seconds: number }>;
  /** Every finding counted by status, route and case family (`500 GET /api/… query where`), beyond the capped list. */
  findings: Record<string, number>;
  /** The first findings, enough to reproduce each by hand. */
  failures: HostileFailure[];
}

const MAX_FAILURES = 200;
const REQUEST_TIMEOUT_MS = 30_000;
/** nginx closes a request that stops arriving after 60 s (`client_header_timeout`, `client_body_timeout`). */
const INCOMPLETE_TIMEOUT_MS = 75_000;
/** Random cases every operation gets at least, whatever the systematic ones already sent. */
const MIN_RANDOM = 10;

/** Where the attack created something (a hostile body can still be a valid one), so teardown removes it. */
function recordCreated(created: Created, c: HostileCase, answer: Answer): void {
  if (c.method !== 'POST' || (answer.status !== 200 && answer.status !== 201)) return;
  let id: unknown;
  try {
    id = (JSON.parse(answer.body) as { id?: unknown }).id;
  } catch {
    return;
  }
  if (typeof id === 'number' && /\/feature_flags\/$/.test(c.route)) created.flags.add(id);
  else if (typeof id === 'number' && /\/cohorts\/$/.test(c.route)) created.cohorts.add(id);
  else if (typeof id === 'number' && /create_from_template_json\/$/.test(c.route)) created.dashboards.add(id);
  else if (typeof id === 'string' && /personal_api_keys\/$/.test(c.route)) created.keys.add(id);
}

/** A case's family: its name up to the value (`query where`, `body properties.plan`, `raw`). */
export const familyOf = (name: string) => name.split(/[ =]/, 3).join(' ');

/** The findings as lines, most frequent first, each with the first failing request of its kind. */
export function findingsSummary(result: HostileResult): string[] {
  return Object.entries(result.findings)
    .sort(([, a], [, b]) => b - a)
    .map(([kind, count]) => {
      const example = result.failures.find((f) => kind === `${f.status === 0 ? 'no_response' : f.status} ${f.route} ${familyOf(f.case)}`);
      return `${String(count).padStart(5)}  ${kind}${example ? `  e.g. ${example.method} ${example.path.slice(0, 120)} -> ${JSON.stringify(example.body.slice(0, 120))}` : ''}`;
    });
}

/** Interleaves the operations' lists, so load spreads over the services; destructive cases go last. */
function schedule(lists: HostileCase[][]): HostileCase[] {
  const first: HostileCase[] = [];
  const last: HostileCase[] = [];
  for (let i = 0; lists.some((list) => i < list.length); i++) {
    for (const list of lists) {
      const c = list[i];
      if (c) (c.last ? last : first).push(c);
    }
  }
  return [...first, ...last];
}

export interface HostileRun {
  /** How many requests `send` sends. */
  requests: number;
  send(): Promise<HostileResult>;
  /** Removes the fixtures, the extra keys and whatever the attack created; once sending is over. */
  teardown(): Promise<void>;
}

/** Reads the routes, makes the fixtures and builds every request, so `send` can start at once (while the caller's faults run, say). */
export async function prepareHostileInput(target: Target, options: HostileOptions = {}): Promise<HostileRun> {
  const log = options.log ?? (() => undefined);
  const minRequests = options.minRequests ?? 10_000;
  const concurrency = Math.max(1, options.concurrency ?? 6);
  const seed = options.seed ?? 14;
  const front = new URL(target.frontUrl);

  const schemaResponse = await fetch(`${target.frontUrl}/api/schema/`);
  if (!schemaResponse.ok) throw new Error(`GET /api/schema/ answered ${schemaResponse.status}: the route list comes from it`);
  const operations = operationsOf((await schemaResponse.json()) as Parameters<typeof operationsOf>[0]);
  const setup = await setUp(target, `${seed}-${Date.now().toString(36)}`, log);

  // Systematic cases first; random draws fill each operation's share of what is left.
  // An alias (the same handler under another prefix) shares its canonical operation's systematic
  // cases, every other one sent to the alias's path: the handler sees every family once, over both paths.
  const systematic: HostileCase[][] = operations.map(() => []);
  operations.forEach((op, i) => {
    const alias = operations.findIndex((other) => canonicalRoute(other) === routeKey(op));
    const isAlias = canonicalRoute(op) !== null && operations.some((other) => routeKey(other) === canonicalRoute(op));
    if (isAlias) return;
    const cases = casesFor(op, setup.fixtures, seed * 1000 + i);
    systematic[i] = alias < 0 ? cases : cases.filter((_, j) => j % 2 === 0);
    if (alias >= 0) systematic[alias] = cases.filter((_, j) => j % 2 === 1).map((c) => onAlias(c, operations[alias]!));
  });
  const frontDoor = frontDoorCases(`${front.hostname}:${front.port}`);
  const counted = systematic.reduce((n, list) => n + list.length, frontDoor.length);
  const perOperation = Math.max(MIN_RANDOM, Math.ceil((minRequests - counted) / operations.length));
  const lists = operations.map((op, i) => [...systematic[i]!, ...randomCasesFor(op, setup.fixtures, perOperation, seed * 1000 + i)]);
  const only = options.only ?? [];
  const cases = schedule([...lists, frontDoor]).filter((c) => only.length === 0 || only.some((prefix) => c.name.startsWith(prefix)));
  log(`hostile: ${cases.length} requests over ${operations.length} operations and the front door, seed ${seed}, ${concurrency} at a time`);
  const outage = options.outage ?? (() => false);
  const created = emptyCreated();

  const headersOf = (c: HostileCase, turn: number): Record<string, string> => {
    const headers = { ...c.headers };
    if (c.auth === 'key') headers.authorization = `Bearer ${setup.keys[turn % setup.keys.length]}`;
    else if (c.auth === 'bad') headers.authorization = 'Bearer phx_thisKeyDoesNotExistAnywhere000000000000000';
    else if (c.auth === 'project') headers.authorization = `Bearer ${target.projectApiKey}`;
    return headers;
  };

  const send = async (): Promise<HostileResult> => {
    const result: HostileResult = { requests: 0, unexpected5xx: 0, outage503: 0, staleConnections: [], non_json_4xx: 0, byRoute: {}, findings: {}, failures: [] };
    const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
    const started = Date.now();
    let next = 0;
    let progressAt = Date.now();

    const worker = async () => {
      for (;;) {
        const turn = next++;
        const c = cases[turn];
        if (!c) return;
        const sentAt = Date.now();
        const sendOn = (via: http.Agent) => sendHttp(via, front, c.method, c.path, headersOf(c, turn), c.body, REQUEST_TIMEOUT_MS);
        let answer = 'raw' in c ? await sendRaw(front, (c as RawCase).raw, (c as RawCase).incomplete ? INCOMPLETE_TIMEOUT_MS : REQUEST_TIMEOUT_MS) : await sendOn(agent);
        if (answer.staleAfter !== undefined) {
          result.staleConnections.push(`${c.method} ${c.path.slice(0, 100)} [${c.name}] on a connection found closed after ${answer.staleAfter}`);
          // On a connection of its own: sent through the pool again, it went out on another pooled
          // connection that was closing as well (seen once: two in a row), and got no answer twice.
          const fresh = new http.Agent({ keepAlive: false });
          answer = await sendOn(fresh);
          fresh.destroy();
        }
        // node:http would not write it at all; nothing reached the server, so nothing is judged.
        if (answer.status === -1) continue;
        recordCreated(created, c, answer);
        const route = (result.byRoute[c.route] ??= { requests: 0, status: {}, seconds: 0 });
        route.seconds += (Date.now() - sentAt) / 1000;
        const status = answer.status === 0 ? 'no_response' : String(answer.status);
        route.requests++;
        route.status[status] = (route.status[status] ?? 0) + 1;
        result.requests++;
        // A request that never ends is answered by closing the connection (no timeout of ours: that sets `error`).
        const closedUnfinished = 'raw' in c && (c as RawCase).incomplete === true && answer.status === 0 && answer.error === undefined;
        const duringOutage = answer.status === 503 && (c.method === 'HEAD' || isErrorShape(answer.body)) && outage(sentAt, Date.now());
        if (duringOutage) result.outage503++;
        const verdict = closedUnfinished || duringOutage ? 'ok' : judge(c.method, answer);
        if (verdict === 'unexpected_5xx' || verdict === 'no_response') result.unexpected5xx++;
        if (verdict === 'non_json_4xx') result.non_json_4xx++;
        // One listed failure per status, route and case family: enough to find each broken handler and reproduce it.
        const kind = `${status} ${c.route} ${familyOf(c.name)}`;
        if (verdict !== 'ok') result.findings[kind] = (result.findings[kind] ?? 0) + 1;
        if (verdict !== 'ok' && result.failures.length < MAX_FAILURES && result.findings[kind] === 1) {
          result.failures.push({ route: c.route, method: c.method, path: 'raw' in c ? (c as RawCase).raw.subarray(0, 120).toString('latin1') : c.path.slice(0, 300), status: answer.status, body: answer.error ? `${answer.error} (${answer.connection ?? ''})` : answer.body.slice(0, 300), case: c.name });
        }
        if (Date.now() - progressAt > 10_000) {
          progressAt = Date.now();
          log(`hostile: ${result.requests}/${cases.length} sent, ${result.unexpected5xx} 5xx or unanswered, ${result.outage503} 503 during faults, ${result.non_json_4xx} non-JSON 4xx, ${Math.round((Date.now() - started) / 1000)} s`);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      agent.destroy();
    }
    log(`hostile: done in ${Math.round((Date.now() - started) / 1000)} s`);
    for (const stale of result.staleConnections) log(`hostile: sent again: ${stale}`);
    for (const line of findingsSummary(result)) log(`hostile: FOUND ${line}`);
    return result;
  };

  return { requests: cases.length, send, teardown: () => setup.teardown(created) };
}

export async function runHostileInput(target: Target, options: HostileOptions = {}): Promise<HostileResult> {
  const run = await prepareHostileInput(target, options);
  try {
    return await run.send();
  } finally {
    await run.teardown();
  }
}
