import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Config } from '@tributary/config';
import { createKafka, kafkaReachability } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { processAlive } from './state-dir.js';

/**
 * The running chaos stack as the suite sees it: its services' processes (started, killed with
 * SIGKILL, restarted as a supervisor would) and its stores (stopped and started by the infra
 * scripts). A watchdog notices any service process that dies without the suite killing it: that
 * is a crash, counted and restarted so the run goes on.
 */

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STATE_DIR = process.env.TRIBUTARY_STATE_DIR ?? path.join(ROOT, '.tributary');

export type Service = 'capture' | 'ingest' | 'ingest-2' | 'decide' | 'api' | 'worker';
export type Store = 'kafka' | 'clickhouse' | 'postgres' | 'redis';
/** One process of cluster mode's stores, by the name of its pid file. */
export type ClusterPart = 'clickhouse-1' | 'clickhouse-2' | 'clickhouse-3' | 'clickhouse-4' | 'kafka-1' | 'kafka-2' | 'kafka-3' | 'zookeeper';

function clusterPartScript(part: ClusterPart): string[] {
  const [kind, n] = part.split('-') as [string, string | undefined];
  if (kind === 'clickhouse') return ['infra/cluster/clickhouse-cluster.sh', 'start-node', n!];
  if (kind === 'kafka') return ['infra/cluster/kafka-cluster.sh', 'start-broker', n!];
  return ['infra/cluster/zookeeper.sh', 'start'];
}

const STORE_SCRIPTS: Record<Store, (action: 'start' | 'stop') => string[]> = {
  kafka: (action) => ['infra/kafka/kafka.sh', action],
  clickhouse: (action) => ['infra/clickhouse/clickhouse.sh', action],
  postgres: (action) => ['infra/chaos/stores.sh', action, 'postgres'],
  redis: (action) => ['infra/chaos/stores.sh', action, 'redis'],
};

export class Stack {
  readonly crashes: string[] = [];
  /** Processes that must be alive: a service leaves this set only while the suite has it down. */
  private readonly expected = new Map<Service, number>();
  private readonly storeStarts: { store: Store; at: number }[] = [];
  private watchdog?: NodeJS.Timeout;
  private checking = false;

  constructor(
    readonly config: Config,
    private readonly log: (line: string) => void,
  ) {}

  portOf(service: Service): number {
    if (service === 'ingest-2') return this.config.ingestPort + 100;
    return this.config[`${service}Port`];
  }

  async startWatching(services: readonly Service[]): Promise<void> {
    for (const service of services) this.expected.set(service, await this.pidOf(service));
    this.watchdog = setInterval(() => void this.check(), 500);
  }

  stopWatching(): void {
    clearInterval(this.watchdog);
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [service, pid] of this.expected) {
        if (processAlive(pid)) continue;
        this.crashes.push(service);
        this.log(`CRASH: ${service} (pid ${pid}) died without being killed; restarting it`);
        this.expected.delete(service);
        await this.start(service);
      }
    } finally {
      this.checking = false;
    }
  }

  async pidOf(service: Service): Promise<number> {
    return Number((await readFile(path.join(STATE_DIR, 'pids', `${service}.pid`), 'utf8')).trim());
  }

  /** `kill -9` of the service's whole process group (the process and any cluster workers). */
  async kill(service: Service): Promise<void> {
    const pid = await this.pidOf(service);
    this.expected.delete(service);
    this.log(`kill -9 ${service} (pid ${pid})`);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      process.kill(pid, 'SIGKILL');
    }
    while (processAlive(pid)) await sleep(50);
  }

  /** Starts a service and waits for its health check, as a supervisor restarting it would. */
  async start(service: Service): Promise<void> {
    const [name, replicas] = service === 'ingest-2' ? ['ingest', '2'] : [service, '1'];
    await this.script(['infra/services.sh', 'start', name], { INGEST_REPLICAS: replicas });
    this.expected.set(service, await this.pidOf(service));
  }

  /** Stops a service gracefully (SIGTERM), for the end of a scenario that added it. */
  async stop(service: Service): Promise<void> {
    this.expected.delete(service);
    const pid = await this.pidOf(service);
    process.kill(pid, 'SIGTERM');
    while (processAlive(pid)) await sleep(100);
  }

  async stopStore(store: Store): Promise<void> {
    this.log(`stopping ${store}`);
    await this.script(STORE_SCRIPTS[store]('stop'));
  }

  /** `kill -9` of one store process of cluster mode (a ClickHouse server, a broker, ZooKeeper). */
  async killPart(part: ClusterPart): Promise<void> {
    const pid = Number((await readFile(path.join(STATE_DIR, 'pids', `${part}.pid`), 'utf8')).trim());
    this.log(`kill -9 ${part} (pid ${pid})`);
    process.kill(pid, 'SIGKILL');
    while (processAlive(pid)) await sleep(50);
  }

  /** Starts a cluster store process again, as its supervisor would, and waits until it answers. */
  async startPart(part: ClusterPart): Promise<void> {
    this.log(`starting ${part}`);
    await this.script(clusterPartScript(part));
  }

  /** Makes the relay every client reaches Kafka through lose the broker's answers, or stop (chaos/kafka-link.ts). */
  async loseKafkaAnswers(losing: boolean): Promise<void> {
    this.log(losing ? "losing Kafka's answers" : "passing Kafka's answers on again");
    const pid = Number((await readFile(path.join(STATE_DIR, 'pids', 'kafka-link.pid'), 'utf8')).trim());
    process.kill(pid, losing ? 'SIGUSR1' : 'SIGUSR2');
  }

  async startStore(store: Store): Promise<void> {
    this.log(`starting ${store}`);
    await this.script(STORE_SCRIPTS[store]('start'));
    if (store === 'kafka') await this.kafkaAnswers();
    this.storeStarts.push({ store, at: Date.now() });
  }

  /**
   * Waits until the broker answers requests: its port opens as it starts, seconds before it
   * serves anything (it took 6 s on the shared machine), and what is measured from its return is
   * how soon the services take events again, not how long Kafka takes to start.
   */
  private async kafkaAnswers(): Promise<void> {
    const reachability = kafkaReachability(createKafka(this.config, createLogger('chaos', 'silent'), 'chaos-probe'));
    try {
      const deadline = Date.now() + 60_000;
      while (!(await reachability.check()) && Date.now() < deadline) await sleep(100);
    } finally {
      await reachability.close();
    }
  }

  /** When the store's start script last returned (for Kafka: when the broker answered) at or after `since`. */
  lastStoreStart(store: Store, since: number): number | undefined {
    return this.storeStarts.findLast((s) => s.store === store && s.at >= since)?.at;
  }

  async ready(service: Service): Promise<boolean> {
    return (await this.readiness(service)).status === 200;
  }

  /** The service's `/_ready` answer; status 0 when it does not answer. */
  async readiness(service: Service): Promise<{ status: number; body: unknown }> {
    try {
      const response = await fetch(`http://127.0.0.1:${this.portOf(service)}/_ready`, { signal: AbortSignal.timeout(3000) });
      return { status: response.status, body: await response.json().catch(() => null) };
    } catch {
      return { status: 0, body: null };
    }
  }

  private async script(args: string[], env: Record<string, string> = {}): Promise<void> {
    await run('bash', args, { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
  }
}

