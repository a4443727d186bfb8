import { isJsonError } from './load-generator.js';
import type { Service, Stack } from './stack.js';

interface ReadinessSample {
  at: number;
  service: Service;
  /** The HTTP status of `/_ready` (0: no answer), and the state it gave each store. */
  status: number;
  checks: Record<string, string>;
}

/** Samples every service's `/_ready` twice a second, so a scenario can ask what each said during its fault. */
export class ReadinessSampler {
  private readonly samples: ReadinessSample[] = [];
  private timer?: NodeJS.Timeout;
  private busy = false;

  constructor(
    private readonly stack: Stack,
    private readonly services: () => readonly Service[],
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), 500);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const at = Date.now();
      await Promise.all(
        this.services().map(async (service) => {
          const { status, body } = await this.stack.readiness(service);
          this.samples.push({ at, service, status, checks: (body as { checks?: Record<string, string> } | null)?.checks ?? {} });
        }),
      );
    } finally {
      this.busy = false;
    }
  }

  /** Whether the service named the store unavailable at least once between the two times. */
  reportedAway(service: Service, store: string, from: number, to: number): boolean {
    return this.during(service, from, to).some((s) => s.checks[store] === 'unavailable');
  }

  /** Whether the service said "not ready" (503) at least once between the two times. */
  wasUnready(service: Service, from: number, to: number): boolean {
    return this.during(service, from, to).some((s) => s.status === 503);
  }

  /** The services that check the store at all, from what they reported. */
  checking(store: string): Service[] {
    return [...new Set(this.samples.filter((s) => store in s.checks).map((s) => s.service))];
  }

  /** When the service first reported every store ok at or after `from`. */
  readyAgainAt(service: Service, from: number): number | undefined {
    return this.samples.find((s) => s.service === service && s.at >= from && s.status === 200 && Object.values(s.checks).every((c) => c === 'ok'))?.at;
  }

  private during(service: Service, from: number, to: number): ReadinessSample[] {
    return this.samples.filter((s) => s.service === service && s.at >= from && s.at <= to);
  }
}

export interface DecideAnswer {
  at: number;
  status: number;
  jsonError: boolean;
  /** The flags of the answer, and whether decide said it could not compute some of them. */
  flags?: Record<string, unknown>;
  errorsWhileComputingFlags?: boolean;
}

/**
 * Asks `/decide` every 200 ms which flags two users get: one decide has seen before (its
 * person is cached) and one new each time (its person can only come from the stores).
 */
export class DecideProbe {
  readonly answers: { known: DecideAnswer[]; fresh: DecideAnswer[] } = { known: [], fresh: [] };
  private timer?: NodeJS.Timeout;
  private count = 0;

  constructor(
    private readonly frontUrl: string,
    private readonly apiKey: string,
    private readonly knownDistinctId: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      void this.ask(this.knownDistinctId).then((a) => this.answers.known.push(a));
      void this.ask(`chaos-fresh-${this.count++}`).then((a) => this.answers.fresh.push(a));
    }, 200);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async ask(distinctId: string): Promise<DecideAnswer> {
    const at = Date.now();
    try {
      const response = await fetch(`${this.frontUrl}/decide/?v=3`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: this.apiKey, distinct_id: distinctId }),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await response.text();
      if (response.status !== 200) return { at, status: response.status, jsonError: isJsonError(text) };
      const body = JSON.parse(text) as { featureFlags?: Record<string, unknown>; errorsWhileComputingFlags?: boolean };
      return { at, status: 200, jsonError: false, flags: body.featureFlags ?? {}, errorsWhileComputingFlags: body.errorsWhileComputingFlags === true };
    } catch {
      return { at, status: 0, jsonError: false };
    }
  }

  between(kind: 'known' | 'fresh', from: number, to: number): DecideAnswer[] {
    return this.answers[kind].filter((a) => a.at >= from && a.at <= to);
  }
}
