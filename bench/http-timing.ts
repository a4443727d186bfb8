/** Timing requests to the endpoint and to ClickHouse, as the query benches send them. */
import type { Config } from '@tributary/config';
import { queryClickHouseSettings } from '../services/api/src/query/query-settings.js';

const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const causeOf = (error: unknown) => String((error as { cause?: unknown }).cause ?? error);

/**
 * One request, timed. The api may be restarted under the bench (another change being tried): a
 * refused connection, a reset reused connection or nginx's 502/503/504 is waited out and sent
 * again, for up to a minute, and only the answered attempt is timed.
 */
export async function timedFetch(url: string, init: RequestInit): Promise<{ ms: number; status: number; body: unknown }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const started = process.hrtime.bigint();
    try {
      const response = await fetch(url, init);
      const text = await response.text();
      const ms = elapsedMs(started);
      if ([502, 503, 504].includes(response.status) && Date.now() < deadline) {
        await sleep(2000);
        continue;
      }
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Left as text for the error message.
      }
      return { ms, status: response.status, body };
    } catch (error) {
      if (!(error instanceof TypeError) || !/ECONNREFUSED|ECONNRESET|EPIPE|other side closed|socket/i.test(causeOf(error)) || Date.now() >= deadline) throw error;
      await sleep(1000);
    }
  }
}

/** Sends a statement to ClickHouse over HTTP with the endpoint's settings and format. */
export function directClickHouse(config: Config) {
  const settings = queryClickHouseSettings(config);
  const params = new URLSearchParams({ database: config.clickhouseDatabase, user: config.clickhouseUser, ...Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, String(v)])) });
  if (config.clickhousePassword) params.set('password', config.clickhousePassword);
  const url = `${config.clickhouseUrl.replace(/\/$/, '')}/?${params}`;
  return async (statement: string): Promise<{ ms: number; rows: unknown[][]; totals?: unknown[]; readMb: number; readRows: number }> => {
    const { ms, status, body } = await timedFetch(url, { method: 'POST', body: `${statement} FORMAT JSONCompact` });
    const answer = body as { data?: unknown[][]; totals?: unknown[]; statistics?: { bytes_read: number; rows_read: number } };
    if (status !== 200 || !Array.isArray(answer.data)) throw new Error(`ClickHouse: ${status} ${String(body).slice(0, 500)}`);
    return { ms, rows: answer.data, ...(answer.totals && { totals: answer.totals }), readMb: (answer.statistics?.bytes_read ?? Number.NaN) / 1e6, readRows: answer.statistics?.rows_read ?? Number.NaN };
  };
}
