import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow, replicasHold } from '@tributary/test-support';
import { useApi } from './api-harness.js';

/**
 * Every query the schemas accept is bounded: at the schemas' maxima (funnel steps and exclusions,
 * series, breakdown limits, formulas, date ranges, intervals) each answers 200 or a 4xx within the
 * query time limit, and ClickHouse stays up within its memory. A 20-step funnel once grew
 * ClickHouse by a gigabyte every few seconds while its aliases were expanded, until the kernel
 * killed the server for every project.
 */
const setup = useApi();
const EVENTS = Array.from({ length: 20 }, (_, i) => `step-${i}`);
const day = (daysAgo: number, second = 0) => new Date(Date.now() - daysAgo * 86_400_000 + second * 1000).toISOString().slice(0, 19).replace('T', ' ');

beforeAll(async () => {
  const { api, tenant } = setup;
  // Three people taking the steps in order, one stopping half way, with browsers to break down by.
  const rows = ['ann', 'bob', 'cy'].flatMap((person, p) => {
    const personId = randomUUID();
    return EVENTS.slice(0, p === 2 ? 10 : 20).map((event, i) =>
      eventRow(tenant.project.id, person, event, day(3, i * 60), { $browser: ['Chrome', 'Firefox', 'Safari'][p], amount: i }, { person_id: personId }),
    );
  });
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, rows);
  await replicasHold(api.clickhouse, api.config, [tenant.project.id]);
});

const run = async (query: object) => {
  const started = Date.now();
  const { status, body } = await setup.api.request('POST', `/api/environments/${setup.tenant.project.id}/query/`, setup.tenant.personalApiKey, { query });
  return { status, body, ms: Date.now() - started };
};

/** ClickHouse's start, so a restart in between is seen, and the memory its queries hold now. */
async function clickhouseState(): Promise<{ uptime: number; memory: number }> {
  const [row] = await setup.api.clickhouse.query<{ uptime: number; memory: number }>(
    sql`SELECT toUInt64(uptime()) AS uptime, toUInt64((SELECT value FROM system.metrics WHERE metric = 'MemoryTracking')) AS memory`,
  );
  return { uptime: Number(row!.uptime), memory: Number(row!.memory) };
}

async function expectBounded(query: object): Promise<{ status: number; body: any }> {
  const before = await clickhouseState();
  const answer = await run(query);
  const answered = answer.status === 200 || (answer.status >= 400 && answer.status < 500);
  expect(answered ? 'answered' : `${answer.status}: ${JSON.stringify(answer.body)}`).toBe('answered');
  // Each statement of an insight has the time limit; a query runs a few at most.
  expect(answer.ms).toBeLessThan(setup.api.config.queryMaxExecutionTimeS * 1000);
  const after = await clickhouseState();
  expect(after.uptime).toBeGreaterThanOrEqual(before.uptime);
  expect(after.memory).toBeLessThan(setup.api.config.queryMaxMemoryBytes);
  return answer;
}

const steps = (n: number) => EVENTS.slice(0, n).map((event) => ({ kind: 'EventsNode', event }));

describe('funnels at the schema maxima', () => {
  it.each(['ordered', 'strict', 'unordered'] as const)('20 %s steps, with as many exclusions as a funnel takes and a breakdown of 1000 values, answer 200 with the right counts', async (order) => {
    const exclusions = order === 'unordered' ? [] : Array.from({ length: 7 }, (_, i) => ({ kind: 'EventsNode', event: `never-${i}`, funnelFromStep: 0, funnelToStep: 19 }));
    const { status, body } = await expectBounded({
      kind: 'FunnelsQuery',
      series: steps(20),
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelOrderType: order, exclusions, funnelWindowInterval: 10_000, funnelWindowIntervalUnit: 'day' },
      breakdownFilter: { breakdown: '$browser', breakdown_limit: 1000 },
    });
    expect(status).toBe(200);
    const counts = Object.fromEntries((body.results as { breakdown_value: string[]; count: number }[][]).map((funnel) => [funnel[0]!.breakdown_value[0], funnel.map((s) => s.count)]));
    // Strict funnels break on nothing here either: each person's events are the steps alone.
    expect(counts).toEqual({ Chrome: Array(20).fill(1), Firefox: Array(20).fill(1), Safari: [...Array(10).fill(1), ...Array(10).fill(0)] });
  });
});

describe('paths at the schema maxima', () => {
  it('20 steps, 1000 edges, 30 cleaning rules of 500 characters (one RE2 must refuse to build), 50 groupings and 100 exclusions answer within the limits', async () => {
    const rules = Array.from({ length: 30 }, (_, i) => ({ regex: i === 0 ? `((a{1000}){1000}){1000}${'b'.repeat(476)}` : `(step-${i % 10})${'(x|y)*'.repeat(80)}`.slice(0, 500), alias: '\\1' }));
    const { status } = await expectBounded({
      kind: 'PathsQuery',
      dateRange: { date_from: '-30d' },
      pathsFilter: {
        stepLimit: 20,
        edgeLimit: 1000,
        localPathCleaningFilters: rules,
        pathGroupings: Array.from({ length: 50 }, (_, i) => `*${'step-'.repeat(79)}${i}*`),
        excludeEvents: Array.from({ length: 100 }, (_, i) => `never-${i}`.padEnd(400, '-')),
        startPoint: 'step-0',
        endPoint: 'step-19',
      },
    });
    expect([200, 400]).toContain(status);
  });
});

describe('every insight kind, generated at and near the maxima', () => {
  const event = fc.constantFrom(...EVENTS, '$pageview', 'never');
  const series = (max: number) => fc.array(event.map((e) => ({ kind: 'EventsNode', event: e })), { minLength: 1, maxLength: max });
  const dateRange = fc.record({ date_from: fc.constantFrom('-1h', '-7d', '-90d', '-1y', '-10y', '2000-01-01', 'mStart', '-5000h'), date_to: fc.constantFrom(null, '-1d') });
  const breakdown = fc.option(fc.record({ breakdown: fc.constantFrom('$browser', 'amount', 'missing'), breakdown_limit: fc.constantFrom(1, 25, 1000) }), { nil: undefined });
  const interval = fc.constantFrom('hour', 'day', 'week', 'month');
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const trends = fc.tuple(series(26), interval, dateRange, breakdown, fc.boolean()).map(([s, i, d, b, formula]) => ({
    kind: 'TrendsQuery',
    series: s,
    interval: i,
    dateRange: d,
    ...(b && { breakdownFilter: b }),
    ...(formula && { trendsFilter: { formula: letters.slice(0, s.length).split('').join(' + ') } }),
  }));
  const funnel = fc.tuple(fc.integer({ min: 2, max: 20 }), fc.constantFrom('ordered', 'strict', 'unordered'), dateRange, breakdown).map(([n, order, d, b]) => ({
    kind: 'FunnelsQuery',
    series: steps(n),
    dateRange: d,
    funnelsFilter: { funnelOrderType: order, ...(order !== 'unordered' && { exclusions: [{ kind: 'EventsNode', event: 'never', funnelFromStep: 0, funnelToStep: n - 1 }] }) },
    ...(b && { breakdownFilter: b }),
  }));
  const stickiness = fc.tuple(series(26), interval, dateRange).map(([s, i, d]) => ({ kind: 'StickinessQuery', series: s, interval: i, dateRange: d }));
  const lifecycle = fc.tuple(event, fc.constantFrom('day', 'week', 'month'), dateRange).map(([e, i, d]) => ({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: e }], interval: i, dateRange: d }));
  const retention = fc.tuple(fc.integer({ min: 1, max: 100 }), fc.constantFrom('Day', 'Week', 'Month'), fc.constantFrom('retention_first_time', 'retention_recurring'), dateRange).map(([total, period, type, d]) => ({
    kind: 'RetentionQuery',
    retentionFilter: { totalIntervals: total, period, retentionType: type, targetEntity: { id: 'step-0', type: 'events' }, returningEntity: { id: 'step-1', type: 'events' } },
    dateRange: d,
  }));

  const paths = fc.tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 1000 }), fc.constantFrom(null, 'step-0', 'step-5'), fc.constantFrom(null, 'step-19', 'step-9'), dateRange).map(([steps, edges, start, end, d]) => ({
    kind: 'PathsQuery',
    pathsFilter: { stepLimit: steps, edgeLimit: edges, startPoint: start, endPoint: end, localPathCleaningFilters: [{ regex: 'step-(\\d)$', alias: 'single-\\1' }], pathGroupings: ['step-1*'] },
    dateRange: d,
  }));

  it('each answers 200 or a 4xx within the time limit, ClickHouse up and within its memory', async () => {
    const outcomes: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.oneof(trends, funnel, stickiness, lifecycle, retention, paths), async (query) => {
        const { status } = await expectBounded(query);
        outcomes[status] = (outcomes[status] ?? 0) + 1;
      }),
      { numRuns: 40 },
    );
    // Most of them must run, or the property proves little.
    expect(outcomes[200] ?? 0).toBeGreaterThanOrEqual(20);
  }, 600_000);
});
