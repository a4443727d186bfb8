import { batchSender } from '../import/batch-sender.js';
import { DEMO_LIB, generateDemoEvents, type DemoShape } from './demo-events.js';

export interface DemoDataOptions extends Omit<DemoShape, 'now'> {
  /** The front door: capture's /batch/ and the API behind it. */
  url: string;
  personalApiKey: string;
  project: number;
  now?: number;
  /** How long to wait for the sent events to be queryable before making the dashboard. */
  arrivalTimeoutMs?: number;
  onProgress?: (message: string) => void;
}

export interface DemoDataResult {
  /** Demo events in the project. */
  events: number;
  /** Of them, sent by this run: none when the project had the demo data already. */
  sent: number;
  dashboardId: number;
  dashboardUrl: string;
}

const BATCH_SIZE = 500;
const DASHBOARD_NAME = 'Product analytics (demo data)';

/**
 * `tributary demo-data`: generated events through capture as a historical migration, then, once
 * they can be queried, a dashboard from the built-in Product analytics template over them. It is
 * idempotent: a project that has demo events already is sent none (events are dated from now, so
 * a second copy would not be folded into the first), and keeps its demo dashboard.
 */
export async function runDemoData(options: DemoDataOptions): Promise<DemoDataResult> {
  const base = options.url.replace(/\/+$/, '');
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${base}/api/environments/${options.project}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.personalApiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  };
  const demoEventCount = async () => {
    const answer = await api<{ results: [[number]] }>('POST', '/query/', { query: { kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE properties.$lib = '${DEMO_LIB}'` } });
    return Number(answer.results[0][0]);
  };

  const { api_token: apiKey } = await fetch(`${base}/api/projects/${options.project}/`, { headers: { authorization: `Bearer ${options.personalApiKey}` } }).then(async (response) => {
    if (!response.ok) throw new Error(`project ${options.project} is not readable with this key: ${response.status} ${await response.text()}`);
    return (await response.json()) as { api_token: string };
  });
  const demoDashboard = async () => {
    const existing = (await api<{ results: { id: number; name: string }[] }>('GET', '/dashboards/?limit=1000')).results.find((d) => d.name === DASHBOARD_NAME);
    const dashboard = existing ?? (await api<{ id: number }>('POST', '/dashboards/', { name: DASHBOARD_NAME, use_template: 'DEFAULT_APP' }));
    return { dashboardId: dashboard.id, dashboardUrl: `${base}/dashboards/${dashboard.id}` };
  };

  const before = await demoEventCount();
  if (before > 0) {
    options.onProgress?.(`project ${options.project} has ${before} demo events already; none sent`);
    return { events: before, sent: 0, ...(await demoDashboard()) };
  }
  const events = generateDemoEvents({ weeks: options.weeks, users: options.users, seed: options.seed, now: options.now ?? Date.now() });
  const send = batchSender({ url: base, apiKey });
  for (let offset = 0; offset < events.length; offset += BATCH_SIZE) {
    await send(events.slice(offset, offset + BATCH_SIZE));
    options.onProgress?.(`sent ${Math.min(offset + BATCH_SIZE, events.length)} of ${events.length} events`);
  }

  // A dashboard made before ingest catches up would show the tiles half empty.
  const deadline = Date.now() + (options.arrivalTimeoutMs ?? 180_000);
  for (let stored = await demoEventCount(); stored < events.length; stored = await demoEventCount()) {
    if (Date.now() > deadline) throw new Error(`only ${stored} of ${events.length} events were stored in time; is the worker running?`);
    options.onProgress?.(`${stored} of ${events.length} events stored`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }

  return { events: events.length, sent: events.length, ...(await demoDashboard()) };
}
