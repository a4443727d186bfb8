import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Logger } from '@tributary/logger';

const SCRAPE = 'tributary:metrics-scrape';
const SCRAPED = 'tributary:metrics-scraped';

interface ScrapeMessage {
  type: typeof SCRAPE;
  id: number;
}

interface ScrapedMessage {
  type: typeof SCRAPED;
  id: number;
  text?: string;
  error?: string;
}

const scrapes = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
let nextScrape = 0;

/**
 * In a cluster worker, offers `registry` to the primary's aggregation (prom-client's
 * `AggregatorRegistry`: constructing one in a worker is what installs its answering side) and
 * listens for the sums of the scrapes it forwards. Nothing to do in a single process.
 */
export function shareMetricsWithPrimary(registry: Registry): void {
  if (!cluster.isWorker) return;
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry();
  process.on('message', (message: ScrapedMessage) => {
    if (message?.type !== SCRAPED) return;
    const scrape = scrapes.get(message.id);
    scrapes.delete(message.id);
    if (message.text !== undefined) scrape?.resolve(message.text);
    else scrape?.reject(new Error(`metrics of the other workers are unavailable: ${message.error}`));
  });
}

/**
 * The text `/metrics` answers: the registry's own, or in a cluster worker every worker's summed
 * by the primary, since a scrape through the shared port reaches one worker, whichever.
 */
export function scrapeMetrics(registry: Registry): Promise<string> {
  if (!cluster.isWorker) return registry.metrics();
  return new Promise((resolve, reject) => {
    const id = nextScrape++;
    // The primary answers within prom-client's 5 s, or says why not; this bounds a primary that cannot.
    const timer = setTimeout(() => {
      scrapes.delete(id);
      reject(new Error('the primary did not answer a metrics scrape within 10 s'));
    }, 10_000);
    scrapes.set(id, {
      resolve: (text) => (clearTimeout(timer), resolve(text)),
      reject: (error) => (clearTimeout(timer), reject(error)),
    });
    process.send!({ type: SCRAPE, id } satisfies ScrapeMessage);
  });
}

/** The primary's side: asks every worker for its metrics (prom-client times out after 5 s) and sums them. */
function aggregateForWorkers(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: ScrapeMessage) => {
    if (message?.type !== SCRAPE) return;
    const reply = (answer: Omit<ScrapedMessage, 'type' | 'id'>) => worker.send({ type: SCRAPED, id: message.id, ...answer } satisfies ScrapedMessage);
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}

/**
 * Runs a service as `workers` processes sharing its port (node:cluster), because one Node process
 * uses one core and capture and decide are CPU-bound. Call it at the top of main.ts, before any
 * store is opened. In a worker, or with one worker, it resolves at once and main.ts goes on. In
 * the primary it forks the workers and never resolves, so the primary opens no store and serves
 * nothing: it forwards SIGTERM and SIGINT to the workers as SIGTERM (each drains as a single
 * process would) and exits once they all have, so pid files and `kill` work as before.
 *
 * A worker that dies before it listens is a start-up failure: the primary stops the others and
 * exits 1, as a single process would have. One that dies later is replaced.
 */
export function runAsWorkers(name: string, workers: number, logger: Logger): Promise<void> {
  if (workers <= 1 || !cluster.isPrimary) return Promise.resolve();
  let stopping = false;
  let failed = false;
  const listening = new Set<number>();
  const stopAll = () => {
    // Once: a second SIGTERM would find the workers' handlers spent and kill them mid-drain.
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };

  // Counted here rather than read from cluster.workers, which drops a worker only once it has
  // both exited and disconnected: when the last one's exit came first, the primary never saw the
  // list empty, never exited, and Node ended it with 13 (its top-level await unsettled).
  const running = new Set<number>();
  cluster.on('fork', (worker) => running.add(worker.id));
  cluster.on('listening', (worker) => listening.add(worker.id));
  cluster.on('exit', (worker, code, signal) => {
    running.delete(worker.id);
    const started = listening.delete(worker.id);
    if (!stopping && started) {
      logger.error({ pid: worker.process.pid, code, signal }, `${name} worker died; starting another`);
      cluster.fork();
      return;
    }
    if (!stopping) {
      logger.error({ pid: worker.process.pid, code, signal }, `${name} worker failed to start; stopping`);
      failed = true;
      stopAll();
    }
    if (code !== 0 && !(stopping && signal === 'SIGTERM')) failed = true;
    if (running.size === 0) process.exit(failed ? 1 : 0);
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stopAll);
  aggregateForWorkers();
  for (let i = 0; i < workers; i++) cluster.fork();
  logger.info({ workers }, `${name} primary started its workers`);
  return new Promise<void>(() => undefined);
}
