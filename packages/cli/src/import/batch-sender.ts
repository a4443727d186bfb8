import type { ImportEvent } from './import-record.js';

export class ImportError extends Error {}

export interface SenderOptions {
  /** The front door (or capture itself); the batch goes to `${url}/batch/`. */
  url: string;
  apiKey: string;
  /** Tries of one batch before the import stops; the wait doubles from `initialDelayMs` up to `maxDelayMs`. */
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  /** Told of each retry, so the progress display can say why it waits. */
  onRetry?: (attempt: number, delayMs: number, why: string) => void;
}

/** Statuses that mean "not now": the event log is away (503), the front door lost its upstream, or throttling. */
const RETRIED = new Set([429, 502, 503, 504]);

/**
 * Sends one batch as a historical migration and resolves once capture answered 200, which
 * means Kafka holds the events. Unavailability is retried with capped exponential backoff and
 * jitter (a retried batch is harmless: its events keep their uuids); any other answer stops the
 * import with capture's own explanation.
 */
export function batchSender(options: SenderOptions): (events: readonly ImportEvent[]) => Promise<void> {
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const maxAttempts = options.maxAttempts ?? 10;
  const initial = options.initialDelayMs ?? 500;
  const cap = options.maxDelayMs ?? 30_000;
  const endpoint = `${options.url.replace(/\/+$/, '')}/batch/`;

  return async (events) => {
    const body = JSON.stringify({ api_key: options.apiKey, historical_migration: true, batch: events });
    for (let attempt = 1; ; attempt++) {
      let why: string;
      try {
        const response = await doFetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(60_000) });
        const text = await response.text();
        if (response.ok) return;
        const detail = (() => {
          try {
            return (JSON.parse(text) as { detail?: string }).detail ?? text;
          } catch {
            return text;
          }
        })();
        if (!RETRIED.has(response.status)) throw new ImportError(`capture refused a batch with ${response.status}: ${detail}`);
        why = `${response.status} ${detail}`.slice(0, 200);
      } catch (error) {
        if (error instanceof ImportError) throw error;
        why = (error as Error).message;
      }
      if (attempt >= maxAttempts) throw new ImportError(`gave up on a batch after ${attempt} tries; last: ${why}`);
      const delay = Math.min(cap, initial * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      options.onRetry?.(attempt, delay, why);
      await sleep(delay);
    }
  };
}
