import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Continuous, bounded capture traffic that behaves like an SDK: every event carries its own uuid,
 * a request that does not get a 200 is sent again unchanged (same uuids) after a backoff, and
 * every uuid that got a 200 is recorded. Hand-written rather than autocannon's, because each
 * request's events and outcome must be known and retried as a unit.
 */

export interface IdentitySequence {
  anonymous: string;
  user: string;
  alias: string;
  email: string;
}

export interface ResponseRecord {
  /** When the request was sent, and when its answer (or its failure) came. */
  at: number;
  done: number;
  path: string;
  status: number;
  /** A 503 (or any non-200) whose body is the project's JSON error shape. */
  jsonError: boolean;
}

export interface LoadOptions {
  frontUrl: string;
  apiKey: string;
  /** Concurrent SDK-like senders. */
  senders: number;
  /** Upper bound on events sent per second, all senders together. */
  eventsPerSecond: number;
  /** Prefix of every distinct id, so one run's ids never meet another's. */
  runId: string;
  log: (line: string) => void;
}

interface Request {
  path: '/capture/' | '/batch/';
  body: Record<string, unknown>;
  uuids: string[];
}

const REQUEST_TIMEOUT_MS = 30_000;
/** After `stop()`, a request still being retried gets this long to land before it is abandoned. */
const DRAIN_MS = 45_000;

export class LoadGenerator {
  /** Each acknowledged uuid, with when its 200 came (ms since the epoch), to tell which fault a loss happened under. */
  readonly acked = new Map<string, number>();
  /** Uuids of requests that never got a 200: they may be stored at most once. */
  readonly abandoned = new Set<string>();
  readonly completedSequences: IdentitySequence[] = [];
  readonly responses: ResponseRecord[] = [];
  /**
   * Answers no fault explains: any 4xx to these valid requests, any 5xx but a JSON 503, and no
   * answer at all within the timeout (the front door stays up throughout, so that is a hang).
   */
  readonly unexpected: ResponseRecord[] = [];
  private stopping = false;
  private stoppedAt = 0;
  private sequenceCount = 0;
  private tokens = 0;
  private senders: Promise<void>[] = [];
  private refill?: NodeJS.Timeout;

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    const perTick = this.options.eventsPerSecond / 10;
    this.refill = setInterval(() => {
      this.tokens = Math.min(this.tokens + perTick, this.options.eventsPerSecond);
    }, 100);
    this.senders = Array.from({ length: this.options.senders }, (_, i) => this.sender(i));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stoppedAt = Date.now();
    await Promise.all(this.senders);
    clearInterval(this.refill);
  }

  /** When the first request sent at or after `time` was answered with a 200 (recovery times). */
  firstOkAfter(time: number): number | undefined {
    return this.responses.find((r) => r.at >= time && r.status === 200)?.done;
  }

  private async sender(index: number): Promise<void> {
    while (!this.stopping) {
      const roll = Math.random();
      if (roll < 0.2) await this.identitySequence();
      else if (roll < 0.5) await this.send(this.singleEvent(`${this.options.runId}-s${index}-${Math.floor(Math.random() * 50)}`));
      else await this.send(this.batch(index, Math.random() < 0.25));
    }
  }

  private async identitySequence(): Promise<void> {
    const n = this.sequenceCount++;
    const sequence: IdentitySequence = {
      anonymous: `${this.options.runId}-anon-${n}`,
      user: `${this.options.runId}-user-${n}`,
      alias: `${this.options.runId}-alias-${n}`,
      email: `user-${n}@${this.options.runId}.example`,
    };
    const steps: Request[] = [
      this.singleEvent(sequence.anonymous, '$pageview'),
      this.singleEvent(sequence.user, '$identify', { $anon_distinct_id: sequence.anonymous, $set: { email: sequence.email, sequence: n } }),
      this.batchOf([
        this.event(sequence.user, '$create_alias', { alias: sequence.alias }),
        this.event(sequence.alias, 'signed in', { $set_once: { first_alias: sequence.alias } }),
      ]),
    ];
    for (const step of steps) {
      if (!(await this.send(step))) return;
    }
    this.completedSequences.push(sequence);
  }

  private event(distinctId: string, event: string, properties: Record<string, unknown> = {}, timestamp = new Date()): Record<string, unknown> {
    return { uuid: randomUUID(), event, distinct_id: distinctId, timestamp: timestamp.toISOString(), properties: { $lib: 'chaos', plan: Math.random() < 0.5 ? 'free' : 'pro', ...properties } };
  }

  private singleEvent(distinctId: string, event = 'clicked', properties: Record<string, unknown> = {}): Request {
    const single = this.event(distinctId, event, properties);
    return { path: '/capture/', body: { api_key: this.options.apiKey, ...single }, uuids: [single.uuid as string] };
  }

  private batchOf(events: Record<string, unknown>[], historical = false): Request {
    const body = { api_key: this.options.apiKey, ...(historical && { historical_migration: true }), sent_at: new Date().toISOString(), batch: events };
    return { path: '/batch/', body, uuids: events.map((e) => e.uuid as string) };
  }

  /** 5 to 40 events of a few distinct ids; a historical batch replays events from weeks ago. */
  private batch(sender: number, historical: boolean): Request {
    const size = 5 + Math.floor(Math.random() * 36);
    const daysAgo = historical ? 7 + Math.floor(Math.random() * 60) : 0;
    const events = Array.from({ length: size }, (_, i) => {
      const at = new Date(Date.now() - daysAgo * 86_400_000 - (size - i) * 1000);
      return this.event(`${this.options.runId}-b${sender}-${Math.floor(Math.random() * 20)}`, historical ? 'imported' : 'viewed', { position: i }, at);
    });
    return this.batchOf(events, historical);
  }

  /** Sends until a 200 (true), or abandons the request once the generator has stopped and drained (false). */
  private async send(request: Request): Promise<boolean> {
    const size = request.uuids.length;
    while (this.tokens < size && !this.stopping) await sleep(20);
    this.tokens -= size;
    const text = JSON.stringify(request.body);
    for (let attempt = 0; ; attempt++) {
      if (this.stopping && Date.now() - this.stoppedAt > DRAIN_MS) {
        for (const uuid of request.uuids) this.abandoned.add(uuid);
        return false;
      }
      const record = await this.post(request.path, text);
      this.responses.push(record);
      if (record.status === 200) {
        for (const uuid of request.uuids) this.acked.set(uuid, record.done);
        return true;
      }
      if (!(record.status === 503 && record.jsonError)) {
        this.unexpected.push(record);
        this.options.log(`load: unexpected ${record.status} from ${record.path}`);
      }
      await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
    }
  }

  private async post(path: string, body: string): Promise<ResponseRecord> {
    const at = Date.now();
    try {
      const response = await fetch(`${this.options.frontUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      return { at, done: Date.now(), path, status: response.status, jsonError: response.status !== 200 && isJsonError(text) };
    } catch {
      return { at, done: Date.now(), path, status: 0, jsonError: false };
    }
  }
}

export function isJsonError(text: string): boolean {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    return typeof body.detail === 'string' && body.detail.length > 0 && typeof body.code === 'string';
  } catch {
    return false;
  }
}
