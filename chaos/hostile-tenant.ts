import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type ClickHouse } from '@tributary/clickhouse';

/**
 * One project sends the heaviest queries the schemas allow and the escape attempts the isolation
 * suite knows, as fast as its concurrency limit lets it, while another project's queries must go
 * on answering, nothing of the other project may appear in the attacker's answers, and ClickHouse
 * must not restart (its uptime never goes back).
 */
export interface Project {
  id: number;
  personalApiKey: string;
}

export interface HostileTenantOptions {
  frontUrl: string;
  attacker: Project;
  victim: Project;
  /** Text every one of the victim's events carries (the run's id): the attacker's answers must never hold it. */
  victimMarker: string;
  clickhouse: ClickHouse;
  durationMs: number;
  /** Attacker requests in flight at once: the project's query concurrency, so some are refused with 429 too. */
  concurrency: number;
  log: (line: string) => void;
}

export interface HostileTenantResult {
  attackerQueries: number;
  attackerStatuses: Record<string, number>;
  /** Attacker answers that were 5xx: a query the schemas accept must answer 200 or a 4xx. */
  attacker5xx: string[];
  /** Attacker answers holding the victim's marker. */
  leaks: string[];
  victimQueries: number;
  victimFailures: string[];
  victimP95Ms: number;
  clickhouseRestarts: number;
}

/** The victim's queries must answer within this even while the attacker runs. */
const VICTIM_LIMIT_MS = 30_000;

const steps = (n: number, prefix = 'step') => Array.from({ length: n }, (_, i) => ({ kind: 'EventsNode', event: `${prefix}-${i}` }));
const exclusions = Array.from({ length: 7 }, (_, i) => ({ kind: 'EventsNode', event: `never-${i}`, funnelFromStep: 0, funnelToStep: 19 }));
const breakdown = { breakdown: '$browser', breakdown_limit: 1000 };
const series26 = Array.from({ length: 26 }, (_, i) => ({ kind: 'EventsNode', event: i % 2 ? null : `viewed`, math: ['total', 'dau', 'weekly_active', 'monthly_active'][i % 4] }));

/** The heaviest requests the schemas take, and the escapes that once read another project's rows or took the store down. */
export const ATTACKS: object[] = [
  ...(['ordered', 'strict', 'unordered'] as const).map((order) => ({
    kind: 'FunnelsQuery',
    series: steps(20),
    dateRange: { date_from: '-5000h' },
    breakdownFilter: breakdown,
    funnelsFilter: { funnelOrderType: order, funnelWindowInterval: 10_000, funnelWindowIntervalUnit: 'day', ...(order !== 'unordered' && { exclusions }) },
  })),
  { kind: 'TrendsQuery', series: series26, interval: 'hour', dateRange: { date_from: '-4999h' }, breakdownFilter: breakdown, trendsFilter: { formula: 'A + B * C - D / (E + 1) + F + G + H + I + J + K + L + M + N + O + P + Q + R + S + T + U + V + W + X + Y + Z' } },
  { kind: 'StickinessQuery', series: series26, interval: 'hour', dateRange: { date_from: '-4999h' } },
  { kind: 'RetentionQuery', retentionFilter: { totalIntervals: 100, period: 'Day', retentionType: 'retention_recurring' }, dateRange: { date_from: '-1y' } },
  { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: null }], interval: 'day', dateRange: { date_from: '-4999d' } },
  ...[
    'SELECT count() FROM events AS a JOIN events AS b ON a.event = b.event',
    'SELECT groupArray(properties), groupArray(elements_chain) FROM events',
    'SELECT count() FROM events WHERE arrayJoin(range(100000)) > 0',
    'SELECT uniqExact(properties), uniqExact(distinct_id, uuid) FROM events',
    'WITH a AS (SELECT * FROM events), b AS (SELECT * FROM a), c AS (SELECT * FROM b) SELECT count() FROM c AS x JOIN c AS y ON x.uuid = y.uuid',
    // ClickHouse reads a name on the right of IN as a table of its database, every project's rows.
    'SELECT count() FROM events AS t WHERE t.distinct_id IN t.distinct_id',
    'SELECT distinct_id AS person_distinct_id FROM events WHERE distinct_id IN person_distinct_id',
    "SELECT count() FROM events WHERE (distinct_id, person_id) IN person_distinct_id.distinct_id",
    "SELECT count() FROM events WHERE in(distinct_id, distinct_id) OR notIn(event, (event))",
    "SELECT * FROM events WHERE arrayExists(person_distinct_id -> distinct_id IN person_distinct_id, [['x']])",
    'SELECT * FROM events WHERE distinct_id IN person_distinct_ids',
    'SELECT event, count() FROM events GROUP BY 1 ORDER BY 2 DESC',
    'SELECT event AS distinct_id, person.properties.email FROM events',
    "SELECT toTimeZone(timestamp, 'Mars/Base') FROM events",
    'SELECT e.person_id, p.id FROM events AS e RIGHT JOIN persons AS p ON e.person_id = p.id',
    'SELECT * FROM person_distinct_ids UNION ALL SELECT * FROM person_distinct_ids',
  ].map((query) => ({ kind: 'HogQLQuery', query })),
  { kind: 'EventsQuery', select: ['*', 'person.properties.email'], orderBy: ['timestamp DESC; SELECT * FROM events'], limit: 50_000 },
  { kind: 'EventsQuery', select: ['distinct_id', 'count()'], where: ['distinct_id IN distinct_id'], after: '-5000d' },
];

async function post(frontUrl: string, project: Project, query: object, timeoutMs: number): Promise<{ status: number; text: string; ms: number }> {
  const started = Date.now();
  try {
    const response = await fetch(`${frontUrl}/api/projects/${project.id}/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, text: await response.text(), ms: Date.now() - started };
  } catch (error) {
    return { status: 0, text: String(error), ms: Date.now() - started };
  }
}

export async function runHostileTenant(options: HostileTenantOptions): Promise<HostileTenantResult> {
  const result: HostileTenantResult = { attackerQueries: 0, attackerStatuses: {}, attacker5xx: [], leaks: [], victimQueries: 0, victimFailures: [], victimP95Ms: 0, clickhouseRestarts: 0 };
  const deadline = Date.now() + options.durationMs;
  const victimTimes: number[] = [];

  const attacker = async (worker: number) => {
    for (let i = worker; Date.now() < deadline; i += options.concurrency) {
      const query = ATTACKS[i % ATTACKS.length]!;
      const answer = await post(options.frontUrl, options.attacker, query, 120_000);
      result.attackerQueries++;
      result.attackerStatuses[answer.status] = (result.attackerStatuses[answer.status] ?? 0) + 1;
      const what = `${JSON.stringify(query).slice(0, 120)} -> ${answer.status} ${answer.text.slice(0, 200)}`;
      if (answer.status === 0 || answer.status >= 500) result.attacker5xx.push(what);
      if (answer.text.includes(options.victimMarker)) result.leaks.push(what);
      // A 429 says the project's concurrency is taken: wait for one of its queries to end, as a client would.
      if (answer.status === 429) await sleep(200);
    }
  };

  const victim = async () => {
    const query = { kind: 'HogQLQuery', query: `SELECT event, count() FROM events WHERE timestamp > now() - INTERVAL 1 HOUR AND distinct_id LIKE '${options.victimMarker}%' GROUP BY event` };
    while (Date.now() < deadline) {
      const answer = await post(options.frontUrl, options.victim, query, VICTIM_LIMIT_MS);
      result.victimQueries++;
      victimTimes.push(answer.ms);
      if (answer.status !== 200) result.victimFailures.push(`${answer.status} after ${answer.ms} ms: ${answer.text.slice(0, 200)}`);
      else if (answer.ms > VICTIM_LIMIT_MS) result.victimFailures.push(`answered after ${answer.ms} ms`);
      await sleep(1000);
    }
  };

  const watchClickHouse = async () => {
    let last = 0;
    while (Date.now() < deadline) {
      const [row] = await options.clickhouse.query<{ uptime: number }>(sql`SELECT toUInt64(uptime()) AS uptime`).catch(() => [] as { uptime: number }[]);
      if (row) {
        const uptime = Number(row.uptime);
        if (uptime < last) result.clickhouseRestarts++;
        last = uptime;
      }
      await sleep(2000);
    }
  };

  options.log(`hostile tenant: project ${options.attacker.id} sends ${ATTACKS.length} kinds of heavy and escaping queries, ${options.concurrency} at a time, for ${options.durationMs / 1000} s; project ${options.victim.id} queries beside it`);
  await Promise.all([...Array.from({ length: options.concurrency }, (_, w) => attacker(w)), victim(), watchClickHouse()]);
  victimTimes.sort((a, b) => a - b);
  result.victimP95Ms = victimTimes[Math.min(victimTimes.length - 1, Math.floor(victimTimes.length * 0.95))] ?? 0;
  return result;
}
