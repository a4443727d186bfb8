import { readFile } from 'node:fs/promises';
import autocannon from 'autocannon';

/** Peak resident memory of a process, read from /proc (VmHWM is the kernel's own high-water mark). */
export async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export async function pidOf(service: string): Promise<number> {
  return Number((await readFile(`.tributary/pids/${service}.pid`, 'utf8')).trim());
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Drives one URL on loopback with a fixed body for a bounded time, then stops by itself. */
export async function drive(options: {
  url: string;
  body: string | Buffer;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  method?: 'POST' | 'GET';
  /** A fresh body per request (different users, say); `body` is used when absent. */
  nextBody?: () => string;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'POST',
    body: options.body,
    headers: { 'content-type': 'application/json', ...options.headers },
    connections: options.connections,
    duration: options.seconds,
    pipelining: 1,
    ...(options.nextBody ? { requests: [{ setupRequest: (request: object) => ({ ...request, body: options.nextBody!() }) }] } : {}),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

export function table(rows: Record<string, string | number>[]): void {
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toFixed(2)) : v]))));
}

/** Samples a process's resident memory while `work` runs and returns the highest value seen. */
export async function sampleRssWhile<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; peakRssMb: number }> {
  let peak = 0;
  const sample = async () => {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    if (match) peak = Math.max(peak, Number(match[1]) / 1024);
  };
  await sample();
  const timer = setInterval(() => void sample(), 250);
  try {
    const value = await work();
    await sample();
    return { value, peakRssMb: peak };
  } finally {
    clearInterval(timer);
  }
}

/** Percentile of already-collected samples, for timings taken outside autocannon. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
