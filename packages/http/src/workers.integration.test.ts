import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@tributary/test-support';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'workers-fixture.ts');

interface Started {
  primary: ChildProcess;
  workers: Map<number, number>;
  exit: Promise<number | null>;
}

/** Starts the fixture and collects `{pid, port}` from each worker as it starts listening. */
function start(workers: number, ...args: string[]): Started {
  const primary = spawn(process.execPath, ['--import', 'tsx', fixture, String(workers), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const started = new Map<number, number>();
  let buffered = '';
  primary.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      const { pid, port } = JSON.parse(line) as { pid: number; port: number };
      started.set(pid, port);
    }
  });
  primary.stderr!.resume();
  const exit = new Promise<number | null>((resolve) => primary.once('exit', (code) => resolve(code)));
  return { primary, workers: started, exit };
}

/** One request on a fresh connection, so the primary hands each to a worker in turn. */
function fetchText(port: number, route: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function get(port: number, route: string): Promise<{ status: number; pid: number }> {
  const { status, body } = await fetchText(port, route);
  return { status, pid: (JSON.parse(body) as { pid: number }).pid };
}

/** The value of one series in Prometheus text, or undefined when it is absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a service run as several workers', () => {
  it('serves one port from every worker and drains them all on SIGTERM to the primary', async () => {
    const service = start(2);
    await waitFor(async () => service.workers.size === 2, { what: 'two workers listening' });
    const [port] = new Set(service.workers.values());
    expect(new Set(service.workers.values()).size).toBe(1);

    const answeredBy = new Set<number>();
    for (let i = 0; i < 10; i++) answeredBy.add((await get(port!, '/pid')).pid);
    expect(answeredBy).toEqual(new Set(service.workers.keys()));

    const inFlight = [get(port!, '/slow'), get(port!, '/slow')];
    await new Promise((resolve) => setTimeout(resolve, 100));
    service.primary.kill('SIGTERM');
    expect((await Promise.all(inFlight)).map((r) => r.status)).toEqual([200, 200]);
    expect(await service.exit).toBe(0);
    for (const pid of service.workers.keys()) await waitFor(async () => !alive(pid), { what: `worker ${pid} gone` });
  });

  it('answers a scrape through the shared port with every worker’s counters summed, whichever worker takes it', async () => {
    const service = start(2);
    await waitFor(async () => service.workers.size === 2, { what: 'two workers listening' });
    const [port] = new Set(service.workers.values());
    const answeredBy = new Set<number>();
    for (let i = 0; i < 12; i++) answeredBy.add((await get(port!, '/pid')).pid);
    expect(answeredBy.size).toBe(2);
    const series = 'tributary_http_requests_total{method="GET",route="/pid",status="200",service="fixture"}';
    // Fresh connections go to the workers in turn, so these scrapes are answered by both.
    for (let i = 0; i < 4; i++) {
      const scrape = await fetchText(port!, '/metrics');
      expect(scrape.status).toBe(200);
      expect(sample(scrape.body, series)).toBe(12);
    }
    service.primary.kill('SIGTERM');
    expect(await service.exit).toBe(0);
  });

  it('replaces a worker that dies after it started', async () => {
    const service = start(2);
    await waitFor(async () => service.workers.size === 2, { what: 'two workers listening' });
    const [first] = service.workers.keys();
    process.kill(first!, 'SIGKILL');
    await waitFor(async () => service.workers.size === 3, { what: 'a replacement worker' });
    service.primary.kill('SIGTERM');
    expect(await service.exit).toBe(0);
  });

  it('exits 1 when its workers cannot start, as a single process would', async () => {
    const service = start(2, 'fail');
    expect(await service.exit).toBe(1);
  });
});
