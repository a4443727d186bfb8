import { randomInt } from 'node:crypto';
import { Sql, serverOf, type ClickHouse } from '@tributary/clickhouse';
import { loadHogQLParser, parseExpr, printQuery, type SelectQuery } from '@tributary/hogql';
import { EVENT_ROW_COLUMNS, eventRow } from '@tributary/test-support';
import { eventsByIdQuery, listEventsQuery, pageOfEventsQuery, propertyValuesQuery } from '../src/events/events-list-query.js';
import type { InsightCache } from '../src/query/insight-cache.js';
import type { EventsQueryRequest } from '../src/query/events-query.js';
import { QueryService, type QueryResponse } from '../src/query/query-service.js';

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
    service = new QueryService({ clickhouse: target(), cache: {} as InsightCache, limits: { queryMaxExecutionTimeS: 60, queryMaxMemoryBytes: 2_000_000_000, queryMaxThreads: 0, queryConcurrencyPerProject: 4 }, cohorts: { definitions: async () => [], memberDistinctIds: async () => [], versions: async () => [], idsByName: async () => [] }, actions: { definitions: async () => [] } });
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
