import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { PersonCache } from '@tributary/control-plane';
import type { Pool } from '@tributary/postgres';

/** Peak resident memory of a process, read from /proc (VmHWM is the kernel's own high-water mark). */
export async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Where `make up` (or a copy started with TRIBUTARY_STATE_DIR) keeps pid files and credentials. */
export const STATE_DIR = process.env.TRIBUTARY_STATE_DIR ?? '.tributary';

export async function pidOf(service: string): Promise<number> {
  return Number((await readFile(`${STATE_DIR}/pids/${service}.pid`, 'utf8')).trim());
}

/** A process's command name, parent and CPU time (user + system, and system alone, in clock ticks of 10 ms) from /proc; null once it is gone. */
async function processStat(pid: number | string): Promise<{ command: string; parent: number; ticks: number; systemTicks: number } | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (stat === '') return null;
  // The command name (field 2) may hold spaces, so the other fields are counted after its closing paren:
  // the parent is field 4, utime and stime fields 14 and 15 of the whole line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const systemTicks = Number(fields[12] ?? 0);
  return { command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), parent: Number(fields[1]), ticks: Number(fields[11] ?? 0) + systemTicks, systemTicks };
}

/** Every process's pid, as /proc lists them. */
async function allPids(): Promise<string[]> {
  return (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry));
}

/** A service's pid and its children's: the primary and its cluster workers, which do the work. */
export async function processesOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await allPids()) if ((await processStat(entry))?.parent === pid) children.push(Number(entry));
  return [pid, ...children];
}

/** The highest peak resident memory of any one process of a service (the primary or a worker). */
export async function peakRssPerProcessMb(pid: number): Promise<number> {
  const peaks = await Promise.all((await processesOf(pid)).map((p) => peakRssMb(p).catch(() => 0)));
  return Math.max(...peaks);
}

/** CPU seconds (user + system) a process and its children have used so far, from /proc (in clock ticks of 10 ms). */
export async function cpuSeconds(pid: number): Promise<number> {
  return (await cpuTimes(pid)).total;
}

/** `cpuSeconds`, and the part of it spent in the kernel (system time). */
async function cpuTimes(pid: number): Promise<{ total: number; system: number }> {
  let ticks = 0;
  let systemTicks = 0;
  for (const p of await processesOf(pid)) {
    const stat = await processStat(p);
    ticks += stat?.ticks ?? 0;
    systemTicks += stat?.systemTicks ?? 0;
  }
  return { total: ticks / 100, system: systemTicks / 100 };
}

const STORE_COMMANDS: Record<string, RegExp> = { clickhouse: /^clickhouse/, postgres: /^postgres/, kafka: /^java$/, redis: /^redis-server/ };
export type StoreCpu = Record<keyof typeof STORE_COMMANDS, number>;

/**
 * CPU seconds every store's processes have used so far, matched by command name over the whole
 * machine: the stores' own share of a phase, which a figure for the Node processes alone hides.
 */
export async function storeCpuSeconds(): Promise<StoreCpu> {
  const totals = Object.fromEntries(Object.keys(STORE_COMMANDS).map((name) => [name, 0])) as StoreCpu;
  for (const entry of await allPids()) {
    const stat = await processStat(entry);
    const store = stat && Object.keys(STORE_COMMANDS).find((name) => STORE_COMMANDS[name]!.test(stat.command));
    if (store) totals[store] = (totals[store] ?? 0) + stat.ticks / 100;
  }
  return totals;
}

/** Clock ticks the machine's cores have been busy and in all, from the first line of /proc/stat. */
export async function machineTicks(): Promise<{ busy: number; all: number }> {
  const [, ...fields] = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const ticks = fields.slice(0, 8).map(Number);
  const idle = ticks[3]! + ticks[4]!;
  const all = ticks.reduce((a, b) => a + b, 0);
  return { busy: all - idle, all };
}

/** The share of the machine's cores kept busy between two readings, by anything at all, in percent. */
export function busyPercent(before: { busy: number; all: number }, after: { busy: number; all: number }): number {
  return Math.round((100 * (after.busy - before.busy)) / (after.all - before.all));
}

/** Each store's CPU µs per event between two readings. */
export function storeCpuPerEvent(before: StoreCpu, after: StoreCpu, events: number): Record<string, number> {
  return Object.fromEntries(Object.keys(before).map((name) => [`${name} µs/event`, Math.round(((after[name]! - before[name]!) * 1e6) / events)]));
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU the server (`serverPid` and its workers) spent per request, in µs, when a pid was given. */
  serverCpuUsPerRequest: number;
  /**
   * The kernel's part of it. On loopback, answering wakes the client: the kernel delivers the
   * bytes and, when the client sleeps waiting (a slow server's client does), wakes it from the
   * server's own time, which costs a service several times what the bare server pays.
   */
  serverKernelUsPerRequest: number;
  /** Cores the load generator (this process) kept busy: near 1 means it, not the server, set the pace. */
  loadGeneratorCores: number;
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
  /** The server's process, whose CPU per request is reported. */
  serverPid?: number;
}): Promise<LoadResult> {
  const serverCpuBefore = options.serverPid ? await cpuTimes(options.serverPid) : { total: 0, system: 0 };
  const ownCpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
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
  const elapsedUs = Number(process.hrtime.bigint() - started) / 1e3;
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const serverCpuAfter = options.serverPid ? await cpuTimes(options.serverPid) : { total: Number.NaN, system: Number.NaN };
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    serverCpuUsPerRequest: ((serverCpuAfter.total - serverCpuBefore.total) * 1e6) / result.requests.total,
    serverKernelUsPerRequest: ((serverCpuAfter.system - serverCpuBefore.system) * 1e6) / result.requests.total,
    loadGeneratorCores: (ownCpu.user + ownCpu.system) / elapsedUs,
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

/** Starts bench/bare-server.ts answering `answer` to every request; returns its URL and a stop. */
export async function startBareServer(answer: string): Promise<{ url: string; pid: number; stop: () => void }> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bare-server.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, answer], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  const stop = () => child.kill('SIGTERM');
  process.once('exit', stop);
  return { url: `http://127.0.0.1:${Number(chunk.toString().trim())}`, pid: child.pid!, stop };
}

type DriveOptions = Parameters<typeof drive>[0];

export const median = (values: readonly number[]) => percentile(values, 50);

/**
 * The baseline and the service driven in turns, `rounds` times, each turn as long as its options'
 * `seconds` and the order swapped every round: on a shared machine whose load drifts by the
 * minute, a burst then falls on both alike, where one long run of each would hand it to one side.
 * Each side's figures are the medians of its turns (its p99 the worst turn's); the ratio is the
 * median of the rounds' own ratios.
 */
export async function driveInTurns(options: { rounds: number; baseline: DriveOptions; service: DriveOptions }): Promise<{ baseline: LoadResult; service: LoadResult; ratio: number }> {
  const baselines: LoadResult[] = [];
  const services: LoadResult[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const baselineTurn = () => drive(options.baseline).then((r) => baselines.push(r));
    const serviceTurn = () => drive(options.service).then((r) => services.push(r));
    if (round % 2 === 0) await baselineTurn().then(serviceTurn);
    else await serviceTurn().then(baselineTurn);
  }
  const combined = (turns: LoadResult[]): LoadResult => ({
    requestsPerSecond: median(turns.map((t) => t.requestsPerSecond)),
    p50: median(turns.map((t) => t.p50)),
    p99: Math.max(...turns.map((t) => t.p99)),
    non2xx: turns.reduce((sum, t) => sum + t.non2xx, 0),
    errors: turns.reduce((sum, t) => sum + t.errors, 0),
    serverCpuUsPerRequest: median(turns.map((t) => t.serverCpuUsPerRequest)),
    serverKernelUsPerRequest: median(turns.map((t) => t.serverKernelUsPerRequest)),
    loadGeneratorCores: median(turns.map((t) => t.loadGeneratorCores)),
  });
  return {
    baseline: combined(baselines),
    service: combined(services),
    ratio: median(services.map((s, i) => s.requestsPerSecond / baselines[i]!.requestsPerSecond)),
  };
}

/**
 * Deletes projects a bench made, with their persons and distinct ids (by cascade), and those
 * persons in decide's cache, which keeps them for 7 days: runs would otherwise pile them up.
 */
export async function deleteBenchProjects(pool: Pool, personCache: PersonCache, ids: readonly number[]): Promise<void> {
  await pool.query('DELETE FROM projects WHERE id = ANY($1)', [ids]);
  for (const id of ids) await personCache.forgetProject(id);
}
