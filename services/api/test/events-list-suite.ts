import { randomInt } from 'node:crypto';
import { Sql, serverOf, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser, parseExpr, printQuery, type SelectQuery } from '@tributary/hogql';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';
import { eventsByIdQuery, listEventsQuery, pageOfEventsQuery, propertyValuesQuery } from '../src/events/events-list-query.js';
import type { InsightCache } from '../src/query/insight-cache.js';
import type { EventsQueryRequest } from '../src/query/events-query.js';
import type { QueryResponse, QueryService } from '../src/query/query-service.js';
import { TEST_QUERY_LIMITS, uncachedQueryService } from './uncached-query-service.js';

/**
 * The events list's statements on real rows: EventsQuery (as the console's events page and
 * PostHog's clients ask it) through the query service printing for the server it talks to, and the
 * stored-events route's own trees (`events/events-list-query.ts`), printed for the server as the route prints them:
 * `events-list.integration.test.ts` runs them on the stack's ClickHouse 18.16,
 * `events-list-chdb.test.ts` on ClickHouse 26, with the same expected answers.
 */
export function eventsListSuite(target: () => ClickHouse): void {
  const team = 500_000_000 + randomInt(90_000_000);
  let service: QueryService;
  beforeAll(async () => {
    await loadHogQLParser();
    const at = (minute: number) => `2024-05-01 10:${String(minute).padStart(2, '0')}:00`;
    await target().insert('events', EVENT_ROW_COLUMNS, [
      eventRow(team, 'ann', '$pageview', at(0), { $browser: 'Chrome', amount: 3 }, { group_0: 'acme' }),
      eventRow(team, 'ann', '$pageview', at(1), { $browser: 'Safari' }, { group_0: 'globex' }),
      eventRow(team, 'bob', '$pageview', at(2), { $browser: 'Firefox', amount: 12 }),
      eventRow(team, 'bob', 'purchase', at(3), { $browser: 'Firefox', amount: 40 }, { group_0: 'Acme' }),
      eventRow(team + 1, 'ann', '$pageview', at(4), { $browser: 'Chrome' }, { group_0: 'acme' }),
    ]);
    // The events list is never cached: the cache is not reached.
    service = uncachedQueryService(target(), { cache: {} as InsightCache });
  });

  const list = async (request: Omit<EventsQueryRequest, 'kind'>) =>
    (await service.run({ id: team, timezone: 'UTC' }, { kind: 'EventsQuery', after: '2024-05-01T00:00:00Z', before: '2024-05-02T00:00:00Z', ...request }, new AbortController().signal)) as QueryResponse;

  it('lists events newest first, * as an object, with the types and the next page', async () => {
    const answer = await list({ select: ['*', 'event', 'properties.$browser'], limit: 2 });
    expect({ columns: answer.columns, types: answer.types, hasMore: answer.hasMore }).toEqual({
      columns: ['*', 'event', 'properties.$browser'],
      types: ["Tuple(UUID, String, String, DateTime('UTC'), String, String, DateTime('UTC'))", 'String', 'Nullable(String)'],
      hasMore: true,
    });
    expect(answer.results.map((row) => row.slice(1))).toEqual([['purchase', 'Firefox'], ['$pageview', 'Firefox']]);
    expect(answer.results[0]![0]).toMatchObject({ event: 'purchase', distinct_id: 'bob', properties: { $browser: 'Firefox', amount: 40 }, timestamp: '2024-05-01T10:03:00Z' });
  });

  it('groups by the columns that do not aggregate, filtered by event, where and properties', async () => {
    const answer = await list({ select: ['distinct_id', 'count()', 'sum(toFloat(properties.amount))'], event: '$pageview', where: ["properties.$browser != 'Safari'"], properties: [{ key: 'amount', value: 1, operator: 'gt', type: 'event' }], orderBy: ['distinct_id'] });
    expect(answer.results).toEqual([['ann', 1, 3], ['bob', 1, 12]]);
  });

  it("filters by an event's group, as PostHog's group page asks ($group_N as an event property)", async () => {
    const answer = await list({ select: ['distinct_id', 'event'], properties: [{ key: '$group_0', value: 'acme', operator: 'exact', type: 'event' }], orderBy: ['timestamp ASC'] });
    expect(answer.results).toEqual([['ann', '$pageview'], ['bob', 'purchase']]);
    const ungrouped = await list({ select: ['distinct_id', 'event'], properties: [{ key: '$group_0', operator: 'is_not_set', type: 'event' }] });
    expect(ungrouped.results).toEqual([['bob', '$pageview']]);
  });

  it('orders and pages as asked', async () => {
    const answer = await list({ select: ['distinct_id', 'event', 'timestamp'], orderBy: ['timestamp ASC'], limit: 2, offset: 1 });
    expect(answer.results).toEqual([['ann', '$pageview', '2024-05-01T10:01:00Z'], ['bob', '$pageview', '2024-05-01T10:02:00Z']]);
  });

  it("pages stored events newest first, the page's rows fetched by id, and lists a property's values", async () => {
    const clickhouse = target();
    const server = await serverOf(clickhouse);
    const read = <T>(query: SelectQuery) => clickhouse.query<T>(Sql.trusted(printQuery(query, { teamId: team, server }).clickhouse));
    const filters = { after: new Date('2024-05-01T00:00:00Z'), before: new Date('2024-05-02T00:00:00Z') };
    const page = await read<{ id: string; ts: string }>(pageOfEventsQuery(filters, 2, 1));
    expect(page.map((p) => p.ts)).toEqual(['2024-05-01 10:02:00', '2024-05-01 10:01:00', '2024-05-01 10:00:00']);
    const rows = await read<{ id: string; distinct_id: string; event: string }>(eventsByIdQuery(page.map((p) => p.id), page.at(-1)!.ts, page[0]!.ts));
    expect(rows.map((r) => [r.id, r.distinct_id]).sort()).toEqual(page.map((p, i) => [p.id, ['bob', 'ann', 'ann'][i]]).sort());
    const listed = await read<{ event: string; distinct_id: string }>(listEventsQuery({ ...filters, event: '$pageview' }, 1, 0));
    expect(listed.map((r) => r.distinct_id)).toEqual(['bob', 'ann']);
    const chosen = await read<{ c0: string }>(listEventsQuery({ ...filters, distinctIds: ['ann'] }, 5, 0, [await parseExpr('event')]));
    expect(chosen.map((r) => r.c0)).toEqual(['$pageview', '$pageview']);
    const values = await read<{ name: string; c: string }>(propertyValuesQuery('$browser', 'fi', undefined));
    expect(values.map((v) => [v.name, Number(v.c)])).toEqual([['Firefox', 2]]);
  });
}

/**
 * EventsQuery newest first (the console's events page) reads look-back windows: the same pages as
 * the whole range gives, for events an hour, a day, weeks and years old, a project with one event a
 * year ago and an empty one, with filters, and never another project's newer events; a page the
 * last hour fills is answered by one statement bounded to that hour.
 */
export function newestFirstSuite(target: () => ClickHouse): void {
  const team = 600_000_000 + randomInt(90_000_000);
  const [other, sparse, empty, ahead] = [team + 1, team + 2, team + 3, team + 4];
  const now = new Date('2025-06-30T12:00:00Z');
  const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
  const ages = [0.5, 0.8, 3, 50, 100, 24 * 20, 24 * 200, 24 * 400];
  const mine = ages.map((hours, i) => ({ timestamp: hoursAgo(hours), event: i % 2 ? 'purchase' : '$pageview', plan: i % 3 ? 'free' : 'pro', n: String(i) }));
  let statements = 0;
  let service: QueryService;
  beforeAll(async () => {
    await loadHogQLParser();
    const newer = Array.from({ length: 10 }, (_, i) => eventRow(other, 'someone', '$pageview', hoursAgo(0.1 + i / 100), { plan: 'pro' }));
    const rows = mine.map((e, i) => eventRow(team, `user-${i % 3}`, e.event, e.timestamp, { plan: e.plan, n: Number(e.n) }));
    const early = [eventRow(ahead, 'clock-ahead', '$pageview', hoursAgo(-24 * 400), { n: 1 }), eventRow(ahead, 'clock-ahead', '$pageview', hoursAgo(10), { n: 2 })];
    await target().insert('events', EVENT_ROW_COLUMNS, [...rows, ...newer, ...early, eventRow(sparse, 'lone', '$pageview', hoursAgo(24 * 366))]);
    const clickhouse = target();
    const counting = new Proxy(clickhouse, {
      get(client, key) {
        if (key === 'queryCompact') {
          return (...args: Parameters<ClickHouse['queryCompact']>) => {
            statements++;
            return client.queryCompact(...args);
          };
        }
        const value: unknown = Reflect.get(client, key);
        return typeof value === 'function' ? value.bind(client) : value;
      },
    });
    service = uncachedQueryService(counting, { clock: () => now, cache: {} as InsightCache, propertyReads: { record: (reads) => recorded.push(reads.map((r) => `${r.column}.${r.key}`)) } });
  });
  const recorded: string[][] = [];

  const list = async (teamId: number, request: Omit<EventsQueryRequest, 'kind' | 'select'>) => {
    statements = 0;
    const answer = (await service.run({ id: teamId, timezone: 'UTC' }, { kind: 'EventsQuery', select: ['event', 'timestamp', 'properties.n'], orderBy: ['timestamp DESC'], after: 'all', ...request }, new AbortController().signal)) as QueryResponse;
    return { rows: answer.results.map((row) => row[2]), hasMore: answer.hasMore, hogql: answer.hogql, statements };
  };
  const hogql = async (teamId: number, query: string) => {
    statements = 0;
    const answer = (await service.run({ id: teamId, timezone: 'UTC' }, { kind: 'HogQLQuery', query }, new AbortController().signal)) as QueryResponse;
    return { rows: answer.results.map((row) => row[0]), hasMore: answer.hasMore, clickhouse: answer.clickhouse, statements };
  };
  /** What the whole range gives: the project's events newest first, from `offset`, `limit` of them. */
  const expected = (events: typeof mine, limit: number, offset: number) => {
    const sorted = [...events].sort((a, b) => b.timestamp.localeCompare(a.timestamp)).map((e) => e.n);
    return { rows: sorted.slice(offset, offset + limit), hasMore: sorted.length > offset + limit };
  };

  it('pages through events an hour, a day, weeks and years old as the whole range does, at every page size and boundary', async () => {
    for (const limit of [1, 2, 3, 4, 7, 8, 9]) {
      for (let offset = 0; offset <= mine.length; offset += limit) {
        const { rows, hasMore } = await list(team, { limit, offset });
        expect({ limit, offset, rows, hasMore }).toEqual({ limit, offset, ...expected(mine, limit, offset) });
      }
    }
  });

  it('keeps the before and after bounds, and the event and property filters', async () => {
    const within = mine.filter((e) => e.timestamp > hoursAgo(24 * 30) && e.timestamp < hoursAgo(2));
    expect(await list(team, { limit: 2, after: `${hoursAgo(24 * 30).replace(' ', 'T')}Z`, before: `${hoursAgo(2).replace(' ', 'T')}Z` })).toMatchObject(expected(within, 2, 0));
    const filtered = mine.filter((e) => e.event === 'purchase' && e.plan === 'free');
    for (const offset of [0, 1, 2]) {
      expect(await list(team, { limit: 1, offset, event: 'purchase', properties: [{ key: 'plan', value: 'free', operator: 'exact', type: 'event' }] })).toMatchObject(expected(filtered, 1, offset));
    }
  });

  it('another project’s newer events never appear and do not fill the page; one event a year ago and none at all are found', async () => {
    expect(await list(team, { limit: 4 })).toMatchObject(expected(mine, 4, 0));
    expect(await list(sparse, { limit: 100 })).toMatchObject({ rows: [null], hasMore: false, statements: 6 });
    expect(await list(empty, { limit: 100 })).toMatchObject({ rows: [], hasMore: false });
  });

  it('reads only the last hour when it fills the page, and widens only as far as it must', async () => {
    // An hour back from the list's end, which is 5 s after now by default.
    const hour = `toDateTime('${new Date(now.getTime() + 5000 - 3_600_000).toISOString()}')`;
    const full = await list(team, { limit: 1 });
    expect(full).toMatchObject({ statements: 1, ...expected(mine, 1, 0) });
    expect(full.hogql).toContain(`timestamp > ${hour}`);
    // Two events in the last hour are exactly the page: the third, in the last day, says there is more.
    expect(await list(team, { limit: 2 })).toMatchObject({ statements: 2, ...expected(mine, 2, 0) });
    // Three in the last day are exactly the page: the fourth, two days back, takes the week.
    expect(await list(team, { limit: 3 })).toMatchObject({ statements: 3, ...expected(mine, 3, 0) });
    // A list in another order reads its whole range at once.
    expect(await list(team, { limit: 2, orderBy: ['timestamp ASC'] })).toMatchObject({ statements: 1, rows: ['7', '6'] });
  });

  describe('HogQL pages newest first read the same windows', () => {
    it('pages as the whole range does, at every page size and boundary, and without a LIMIT of their own', async () => {
      for (const limit of [1, 2, 3, 4, 7, 8, 9]) {
        for (let offset = 0; offset <= mine.length; offset += limit) {
          const { rows } = await hogql(team, `SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT ${limit} OFFSET ${offset}`);
          expect({ limit, offset, rows }).toEqual({ limit, offset, rows: expected(mine, limit, offset).rows });
        }
      }
      expect(await hogql(team, 'SELECT properties.n FROM events ORDER BY timestamp DESC')).toMatchObject({ ...expected(mine, 100, 0), statements: 6 });
    });

    it('keeps every condition: properties, a select alias and a subquery', async () => {
      const free = mine.filter((e) => e.plan === 'free');
      expect(await hogql(team, "SELECT properties.n FROM events WHERE properties.plan = 'free' ORDER BY timestamp DESC LIMIT 2")).toMatchObject({ rows: expected(free, 2, 0).rows });
      const purchases = mine.filter((e) => e.event === 'purchase');
      expect(await hogql(team, "SELECT properties.n, event AS name FROM events WHERE name = 'purchase' ORDER BY events.timestamp DESC LIMIT 3")).toMatchObject({ rows: expected(purchases, 3, 0).rows });
      const buyers = new Set(mine.flatMap((e, i) => (e.event === 'purchase' ? [i % 3] : [])));
      const byBuyers = mine.filter((_, i) => buyers.has(i % 3));
      expect(await hogql(team, "SELECT properties.n FROM events AS e WHERE e.distinct_id IN (SELECT distinct_id FROM events WHERE event = 'purchase') ORDER BY e.timestamp DESC, e.uuid LIMIT 4 OFFSET 1")).toMatchObject({ rows: expected(byBuyers, 4, 1).rows });
    });

    it('reads only the last hour when it fills the page, widens as far as it must, and never counts another project’s newer events', async () => {
      const hour = `> parseDateTimeBestEffort(toString('${new Date(now.getTime() - 3_600_000).toISOString()}'), 'UTC')`;
      const full = await hogql(team, 'SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT 1');
      expect(full).toMatchObject({ statements: 1, rows: expected(mine, 1, 0).rows });
      expect(full.clickhouse).toContain(hour);
      expect(await hogql(team, 'SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT 2')).toMatchObject({ statements: 1, rows: expected(mine, 2, 0).rows });
      expect(await hogql(team, 'SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT 3')).toMatchObject({ statements: 2, rows: expected(mine, 3, 0).rows });
      expect(await hogql(sparse, 'SELECT distinct_id FROM events ORDER BY timestamp DESC LIMIT 5')).toMatchObject({ rows: ['lone'], statements: 6 });
      expect(await hogql(empty, 'SELECT distinct_id FROM events ORDER BY timestamp DESC LIMIT 5')).toMatchObject({ rows: [], statements: 6 });
    });

    it('counts events timed after now in every window, newest first', async () => {
      expect(await hogql(ahead, 'SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT 1')).toMatchObject({ rows: ['1'], statements: 1 });
      expect(await hogql(ahead, 'SELECT properties.n FROM events ORDER BY timestamp DESC LIMIT 2')).toMatchObject({ rows: ['1', '2'], statements: 2 });
    });

    it("counts a page's property reads once, however many windows it reads", async () => {
      recorded.length = 0;
      expect(await hogql(team, "SELECT properties.n FROM events WHERE properties.plan != 'x' ORDER BY timestamp DESC")).toMatchObject({ statements: 6 });
      expect(recorded).toEqual([['properties.n', 'properties.plan']]);
      recorded.length = 0;
      expect(await list(sparse, { limit: 100 })).toMatchObject({ statements: 6 });
      expect(recorded).toEqual([['properties.n']]);
    });

    it('runs its windows within the one time limit of the query, and says so when they use it up', async () => {
      const given: number[] = [];
      const slow = new Proxy(target(), {
        get(client, key) {
          if (key === 'queryCompact') {
            return async (...args: Parameters<ClickHouse['queryCompact']>) => {
              given.push(Number(args[1]?.settings?.max_execution_time));
              await new Promise((resolve) => setTimeout(resolve, 800));
              return client.queryCompact(...args);
            };
          }
          const value: unknown = Reflect.get(client, key);
          return typeof value === 'function' ? value.bind(client) : value;
        },
      });
      const limited = uncachedQueryService(slow, { clock: () => now, cache: {} as InsightCache, limits: { ...TEST_QUERY_LIMITS, queryMaxExecutionTimeS: 2 } });
      const sparsePage = limited.run({ id: sparse, timezone: 'UTC' }, { kind: 'HogQLQuery', query: 'SELECT distinct_id FROM events ORDER BY timestamp DESC LIMIT 5' }, new AbortController().signal);
      // Six statements of 0.8 s each would take 4.8 s: each is given what is left of the 2 s, and none starts after.
      const shrinking = () => given.length < 6 && given[0] === 2 && given.every((s, i) => s >= 1 && (i === 0 || s <= given[i - 1]!));
      await expect(sparsePage).rejects.toMatchObject({ status: 400, code: 'query_timeout' });
      expect({ given, shrinking: shrinking() }).toEqual({ given, shrinking: true });
      given.length = 0;
      const listed = limited.run({ id: sparse, timezone: 'UTC' }, { kind: 'EventsQuery', select: ['event'], orderBy: ['timestamp DESC'], after: 'all' }, new AbortController().signal);
      await expect(listed).rejects.toMatchObject({ status: 400, code: 'query_timeout' });
      expect({ given, shrinking: shrinking() }).toEqual({ given, shrinking: true });
    });

    it('reads the whole range at once for any other order or shape', async () => {
      expect(await hogql(team, 'SELECT properties.n FROM events ORDER BY timestamp ASC LIMIT 1')).toMatchObject({ statements: 1, rows: ['7'] });
      expect(await hogql(team, 'SELECT count() FROM events ORDER BY count() DESC LIMIT 1')).toMatchObject({ statements: 1, rows: [mine.length] });
      expect(await hogql(team, 'SELECT n FROM (SELECT properties.n AS n, timestamp FROM events) ORDER BY timestamp DESC LIMIT 1')).toMatchObject({ statements: 1, rows: ['0'] });
    });
  });
}
