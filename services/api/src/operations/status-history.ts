import type { ServiceName } from '@tributary/config';
import type { Redis } from '@tributary/redis';

/** What the status page charts: each a counter summed over the services that expose it. */
export const HISTORY_SERIES = {
  capture_events_accepted: { services: ['capture'], metric: 'tributary_capture_events_accepted_total', errorsOnly: false },
  ingest_events_written: { services: ['ingest'], metric: 'tributary_ingest_events_total', errorsOnly: false },
  decide_requests: { services: ['decide'], metric: 'tributary_http_requests_total', errorsOnly: false },
  http_errors: { services: ['capture', 'decide', 'api', 'ingest', 'worker'], metric: 'tributary_http_requests_total', errorsOnly: true },
} as const satisfies Record<string, { services: readonly ServiceName[]; metric: string; errorsOnly: boolean }>;

export type SeriesName = keyof typeof HISTORY_SERIES;
export type Sample = { at: number; totals: Partial<Record<SeriesName, number>> };
export interface HistorySeries {
  name: SeriesName;
  /** Per-second rates between consecutive samples, stamped with the later one (epoch ms). */
  points: { at: number; perSecond: number }[];
}

const KEY = 'tributary:status:history';
const LOCK = 'tributary:status:history:lock';
/** An hour of samples at the sampling interval. */
export const SAMPLE_INTERVAL_MS = 15_000;
const KEPT = Math.ceil(3_600_000 / SAMPLE_INTERVAL_MS) + 1;

/** A counter's total over its series in Prometheus' text format; with `errorsOnly`, only those with a 5xx status label. */
export function counterTotal(exposition: string, metric: string, errorsOnly: boolean): number {
  let total = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(metric) || (line[metric.length] !== '{' && line[metric.length] !== ' ')) continue;
    if (errorsOnly && !/status="5\d\d"/.test(line)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) total += value;
  }
  return total;
}

/** Rates from samples oldest first; a total that fell means the service restarted, so it counts from zero. */
export function ratesOf(samples: readonly Sample[]): HistorySeries[] {
  return (Object.keys(HISTORY_SERIES) as SeriesName[]).map((name) => {
    const points: HistorySeries['points'] = [];
    for (let i = 1; i < samples.length; i++) {
      const [before, after] = [samples[i - 1]!, samples[i]!];
      const [from, to] = [before.totals[name], after.totals[name]];
      if (from === undefined || to === undefined || after.at <= before.at) continue;
      points.push({ at: after.at, perSecond: ((to >= from ? to - from : to) * 1000) / (after.at - before.at) });
    }
    return { name, points };
  });
}

/**
 * The last hour of the services' counters, kept in Redis so every api instance serves the same
 * history and a restart keeps it. One instance samples per interval (a short lock), so that
 * several instances do not crowd the list with near-duplicate samples.
 */
export class StatusHistory {
  constructor(private readonly deps: { redis: Redis; serviceUrls: Record<ServiceName, string>; clock?: () => number; timeoutMs?: number }) {}

  async sample(): Promise<Sample | null> {
    const now = (this.deps.clock ?? Date.now)();
    if ((await this.deps.redis.set(LOCK, String(now), 'PX', SAMPLE_INTERVAL_MS - 1_000, 'NX')) !== 'OK') return null;
    const services = [...new Set(Object.values(HISTORY_SERIES).flatMap((s) => s.services))];
    const expositions = new Map(
      await Promise.all(
        services.map(async (service) => {
          try {
            const response = await fetch(`${this.deps.serviceUrls[service]}/metrics`, { signal: AbortSignal.timeout(this.deps.timeoutMs ?? 2_000) });
            return [service, response.ok ? await response.text() : null] as const;
          } catch {
            return [service, null] as const;
          }
        }),
      ),
    );
    const totals: Sample['totals'] = {};
    for (const [name, series] of Object.entries(HISTORY_SERIES) as [SeriesName, (typeof HISTORY_SERIES)[SeriesName]][]) {
      const texts = series.services.map((service) => expositions.get(service));
      // A service that did not answer leaves a gap rather than a fall to zero that would read as a restart.
      if (texts.every((text) => typeof text === 'string')) totals[name] = texts.reduce((sum, text) => sum + counterTotal(text!, series.metric, series.errorsOnly), 0);
    }
    const sample = { at: now, totals };
    await this.deps.redis.multi().lpush(KEY, JSON.stringify(sample)).ltrim(KEY, 0, KEPT - 1).exec();
    return sample;
  }

  async series(): Promise<HistorySeries[]> {
    const stored = await this.deps.redis.lrange(KEY, 0, KEPT - 1);
    // The list is capped by count: samples an api stopped hours ago left are older than the hour shown.
    const since = (this.deps.clock ?? Date.now)() - 3_600_000;
    return ratesOf(stored.map((text) => JSON.parse(text) as Sample).filter((sample) => sample.at >= since).reverse());
  }

  /** Samples every interval until stopped; a failed sample is only a gap in the charts. */
  start(onError: (error: unknown) => void): () => void {
    const tick = () => void this.sample().catch(onError);
    tick();
    const timer = setInterval(tick, SAMPLE_INTERVAL_MS);
    timer.unref();
    return () => clearInterval(timer);
  }
}
