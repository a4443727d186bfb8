/**
 * What the infra scripts leave in the state directory (`TRIBUTARY_STATE_DIR`, else `.tributary`),
 * as the chaos suite and the hostile-input command read it: the demo project's keys, and the pid
 * files that tell whether each service is alive and healthy.
 */
import { readFileSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { readCredentials, type Credentials } from '@tributary/cli';
import { SERVICE_NAMES, type Config, type ServiceName } from '@tributary/config';

/** The keys `make up` wrote (credentials.env); throws naming the file when they are not there. */
export async function readStackCredentials(stateDir: string): Promise<Credentials> {
  const file = path.join(stateDir, 'credentials.env');
  const credentials = await readCredentials(file);
  if (!credentials) throw new Error(`no credentials in ${file}: start the stack first`);
  return credentials;
}

export interface ServiceState {
  name: string;
  pid: number | null;
  alive: boolean;
  healthy: boolean;
}

/** Where a process's `/_health` answers: its service's port from the config; ingest replica N > 1 (`ingest-N`) 100 * (N - 1) above it, as infra/services.sh starts them. */
function healthUrlOf(name: string, config: Config): string | null {
  const [service, replica] = name.split('-') as [string, string | undefined];
  if (!(SERVICE_NAMES as readonly string[]).includes(service)) return null;
  const port = config[`${service as ServiceName}Port`] + (replica === undefined ? 0 : 100 * (Number(replica) - 1));
  return `http://127.0.0.1:${port}/_health`;
}

/** A process that is gone or a zombie is not alive: in a container whose init does not reap, a dead one lingers as a zombie. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return response.ok;
  } catch {
    return false;
  }
}

/** Every process with a pid file in `stateDir/pids`, alive or not, and whether its `/_health` answers. */
export async function checkServices(stateDir: string, config: Config): Promise<ServiceState[]> {
  const dir = path.join(stateDir, 'pids');
  const states: ServiceState[] = [];
  for (const file of (await readdir(dir).catch(() => [])).filter((f) => f.endsWith('.pid')).sort()) {
    const name = file.slice(0, -4);
    const pid = Number((await readFile(path.join(dir, file), 'utf8')).trim()) || null;
    const alive = pid !== null && processAlive(pid);
    const url = healthUrlOf(name, config);
    states.push({ name, pid, alive, healthy: alive && (url === null || (await healthy(url))) });
  }
  return states;
}

/** Services fine before and not after (dead, unhealthy, or a new pid: something restarted it). */
export function crashesBetween(before: readonly ServiceState[], after: readonly ServiceState[]): string[] {
  return before
    .filter((b) => b.alive && b.healthy)
    .filter((b) => {
      const a = after.find((s) => s.name === b.name);
      return !a || !a.alive || !a.healthy || a.pid !== b.pid;
    })
    .map((b) => b.name);
}
