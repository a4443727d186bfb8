import { randomUUID } from 'node:crypto';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, sql } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, createKey, createTestTenant, eventRow, replicasHold, waitFor, type TestTenant } from '@tributary/test-support';
import { startApi, useApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
let tenant: TestTenant;
let other: TestTenant;

const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString().slice(0, 19).replace('T', ' ');
const row = (teamId: number, i: number, distinctId: string, event: string, properties: object) => eventRow(teamId, distinctId, event, recent(60 - i), properties, { inserted_at: recent(0) });

const query = (body: unknown, key: string | null = tenant.personalApiKey, project = tenant.project.id, scope = 'environments') =>
  api.request('POST', `/api/${scope}/${project}/query/`, key, body);
const hogql = (text: string, values?: Record<string, unknown>) => query({ query: { kind: 'HogQLQuery', query: text, ...(values && { values }) } });

const setup = useApi();
beforeAll(async () => {
  ({ api, tenant } = setup);
  other = await createTestTenant(api.pool, api.config);
  const mine = [
    row(tenant.project.id, 1, 'ann', '$pageview', { $browser: 'Chrome', amount: 5, paid: true }),
    row(tenant.project.id, 2, 'ann', 'signed up', { $browser: 'Chrome', amount: 20, paid: false }),
    row(tenant.project.id, 3, 'bob', '$pageview', { $browser: 'Firefox', amount: 12 }),
  ];
  const theirs = [row(other.project.id, 1, 'other-team-secret', '$pageview', { $browser: 'Chrome', secret: 'other-team-secret' })];
  await api.clickhouse.insert('events', EVENT_ROW_COLUMNS, [...mine, ...theirs]);
  const personId = randomUUID();
  await api.clickhouse.insert('person', PERSON_COLUMNS, [
    { id: personId, created_at: recent(60), team_id: tenant.project.id, properties: JSON.stringify({ email: 'ann@example.com' }), is_identified: 1, is_deleted: 0, version: 1 },
  ]);
  await api.clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, [
    { team_id: tenant.project.id, distinct_id: 'ann', person_id: personId, is_deleted: 0, version: 1 },
  ]);
  await replicasHold(api.clickhouse, api.config, [tenant.project.id]);
});

describe('POST /api/environments/:id/query/ with a HogQLQuery', () => {
  it("answers PostHog's fields: results as arrays, columns, [name, type] pairs, the HogQL as run, hasMore, limit, offset, timings", async () => {
    const { status, body } = await hogql('SELECT event, count() AS c FROM events GROUP BY event ORDER BY c DESC, event');
    expect(status).toBe(200);
    expect(body.results).toEqual([['$pageview', 2], ['signed up', 1]]);
    expect(body.columns).toEqual(['event', 'c']);
    expect(body.types).toEqual([['event', 'String'], ['c', 'UInt64']]);
    expect(body.hogql).toBe('SELECT event, count() AS c FROM events GROUP BY event ORDER BY c DESC, event ASC LIMIT 100');
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0 });
    expect(body.timings.map((t: { k: string }) => t.k)).toEqual(['./parse', './print', './clickhouse_execute', '.']);
    expect(body.clickhouse).toContain(`team_id = ${tenant.project.id}`);
  });

  it('is the same resource under /api/projects/', async () => {
    const { status, body } = await query({ query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } }, tenant.personalApiKey, tenant.project.id, 'projects');
    expect(status).toBe(200);
    expect(body.results).toEqual([[3]]);
  });

  it("reads properties as text, a person's properties through the distinct id, and dates as ISO 8601", async () => {
    const { body } = await hogql("SELECT properties.$browser, person.properties.email, timestamp FROM events WHERE distinct_id = 'ann' ORDER BY timestamp LIMIT 1");
    expect(body.results[0].slice(0, 2)).toEqual(['Chrome', 'ann@example.com']);
    expect(body.results[0][2]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });

  it('compares a property with a number as a number and with a boolean as JSON writes it', async () => {
    expect((await hogql('SELECT distinct_id FROM events WHERE properties.amount > 10 ORDER BY timestamp')).body.results).toEqual([['ann'], ['bob']]);
    expect((await hogql("SELECT event FROM events WHERE properties.paid = true")).body.results).toEqual([['$pageview']]);
  });

  it('fills {placeholders} from values, as values, never as SQL', async () => {
    const { body } = await hogql('SELECT count() FROM events WHERE distinct_id = {who}', { who: "ann' OR 1=1 --" });
    expect(body.results).toEqual([[0]]);
    expect((await hogql('SELECT count() FROM events WHERE distinct_id IN {who}', { who: ['ann', 'bob'] })).body.results).toEqual([[3]]);
  });

  it('returns 100 rows by default and says there are more; a LIMIT above 50,000 is cut to it', async () => {
    const many = await hogql('SELECT arrayJoin(range(150))');
    expect(many.body.results).toHaveLength(100);
    expect(many.body).toMatchObject({ hasMore: true, limit: 100 });
    const capped = await hogql('SELECT arrayJoin(range(60000)) LIMIT 70000');
    expect(capped.body.results).toHaveLength(50_000);
    expect(capped.body.limit).toBe(50_000);
  });

  it("never returns another project's rows, whatever the query names", async () => {
    for (const text of [
      'SELECT distinct_id FROM events',
      'SELECT distinct_id FROM events WHERE 1 = 1 OR 1 = 1',
      'SELECT distinct_id FROM events UNION ALL SELECT distinct_id FROM events',
      'SELECT e.distinct_id FROM events e JOIN (SELECT distinct_id FROM events) s ON e.distinct_id = s.distinct_id',
      'WITH x AS (SELECT * FROM events) SELECT distinct_id, properties FROM x',
      "SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE distinct_id = 'other-team-secret')",
    ]) {
      const { status, body } = await hogql(text);
      expect(status).toBe(200);
      expect(JSON.stringify(body.results)).not.toContain('other-team-secret');
    }
    const named = await hogql(`SELECT count() FROM events WHERE team_id = ${other.project.id}`);
    expect(named.status).toBe(400);
    expect(named.body.detail).toMatch(/Unable to resolve field: team_id/);
  });
});

describe('the query endpoint refuses what cannot run with a 400 naming the problem', () => {
  it.each([
    ['SELECT hamburger(1)', /Unsupported function call 'hamburger\(\.\.\.\)'/, 'hogql_query_error'],
    ['SELECT chipotle FROM events', /Unable to resolve field: chipotle/, 'hogql_query_error'],
    ['SELECT * FROM numbers(10)', /Table functions are not allowed/, 'hogql_query_error'],
    ['SELECT * FROM system.numbers', /Unknown table "system.numbers"/, 'hogql_query_error'],
    ['SELECT 1; SELECT 2', /Syntax error/, 'hogql_syntax_error'],
    ['SELECT 1 SETTINGS readonly = 0', /Not supported/, 'hogql_syntax_error'],
    ['SELEC 1', /Syntax error/, 'hogql_syntax_error'],
    ['SELECT {nothing}', /Placeholder \{nothing\} has no value/, 'hogql_query_error'],
    // The stack's server is 18.16: the printer read its version and refuses what only later releases run.
    ['SELECT row_number() OVER (ORDER BY timestamp) FROM events', /window functions \(OVER, WINDOW\) need ClickHouse 21\.9 or newer; this server is 18\.16/, 'hogql_query_error'],
    ["SELECT JSONExtractInt(properties, 'amount') FROM events", /JSONExtract functions need ClickHouse 20\.1 or newer; this server is 18\.16/, 'hogql_query_error'],
  ])('%s', async (text, detail, code) => {
    const { status, body } = await hogql(text);
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', code, attr: 'query', detail: expect.stringMatching(detail) });
  });

  it('names a query kind it does not run, and a body without a query', async () => {
    const kind = await query({ query: { kind: 'ErrorTrackingQuery' } });
    expect(kind.status).toBe(400);
    expect(kind.body).toMatchObject({ code: 'unsupported_query_kind', detail: expect.stringContaining('ErrorTrackingQuery') });
    const missing = await query({});
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/query/);
  });

  it('answers a type ClickHouse refuses for the data (text used as a number) with a 400, not a 500', async () => {
    const { status, body } = await hogql("SELECT properties.$browser + 1 FROM events");
    expect(status).toBe(400);
    expect(body.code).toBe('hogql_query_error');
  });

  it.each([
    ['an unknown time zone', "SELECT toTimeZone(timestamp, 'Mars/Base') FROM events", /time zone the query names is not one ClickHouse knows.*Mars\/Base/],
    ['a RIGHT JOIN of events and persons reading the lazy person', 'SELECT e.person_id, p.id FROM events AS e RIGHT JOIN persons AS p ON e.person_id = p.id', /cannot be computed where it is used/],
    ['IN a column that is not an array', 'SELECT count() FROM events AS t WHERE t.distinct_id IN t.event', /must be an array/],
    ['a column neither aggregated nor grouped', 'SELECT event, count() FROM events GROUP BY distinct_id', /neither aggregated nor in GROUP BY/],
  ])("an error ClickHouse raises for the query's own making is a 400 naming it: %s", async (_case, text, detail) => {
    const { status, body } = await hogql(text);
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'invalid_request', code: 'hogql_query_error', attr: 'query', detail: expect.stringMatching(detail) });
  });

  it("a name on the right of IN never reads another project's table, through the query endpoint, EventsQuery, the events list or a saved insight", async () => {
    // 18.16 read `t.person_distinct_id` after IN as its table person_distinct_id, every project's
    // rows: with a tuple of the right arity, a membership oracle over another project's ids.
    const oracle = "SELECT count() FROM (SELECT 1 AS person_distinct_id) AS t WHERE tuple(0, 'other-team-secret') IN t.person_distinct_id";
    const answers = [
      await hogql(oracle),
      await hogql("SELECT count() FROM events AS t WHERE 'other-team-secret' IN t.distinct_id"),
      await query({ query: { kind: 'EventsQuery', select: ['count()'], where: ["'other-team-secret' IN distinct_id"] } }),
      await api.request('GET', `/api/environments/${tenant.project.id}/events/?${new URLSearchParams({ where: JSON.stringify(["'other-team-secret' IN distinct_id"]) })}`, tenant.personalApiKey),
    ];
    const saved = await api.request('POST', `/api/environments/${tenant.project.id}/insights/`, tenant.personalApiKey, { name: 'oracle', query: { kind: 'DataTableNode', source: { kind: 'HogQLQuery', query: oracle } } });
    expect(saved.status).toBe(201);
    answers.push(await api.request('GET', `/api/environments/${tenant.project.id}/insights/${saved.body.id}/?refresh=force_blocking`, tenant.personalApiKey));
    // Each is refused for what the query asks (has() over a value that is no array), none answers.
    for (const { status, body } of answers) {
      expect(status).toBe(400);
      expect(JSON.stringify(body)).toMatch(/must be an array/);
    }
  });

  it('GROUP BY and ORDER BY by position work, with a lazily joined person property too', async () => {
    const { status, body } = await hogql('SELECT person.properties.email, count() FROM events GROUP BY 1 ORDER BY 2 DESC, 1');
    expect(status).toBe(200);
    expect(body.results).toEqual([['ann@example.com', 2], [null, 1]]);
    const past = await hogql('SELECT event FROM events GROUP BY 2');
    expect(past).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/GROUP BY 2 names no column/) } });
  });

  it("an alias named distinct_id does not rewire the person join's key", async () => {
    const { status, body } = await hogql("SELECT event AS distinct_id, person.properties.email FROM events WHERE event = 'signed up'");
    expect(status).toBe(200);
    expect(body.columns).toEqual(['distinct_id', 'person.properties.email']);
    expect(body.results).toEqual([['signed up', 'ann@example.com']]);
  });

  it('needs a key with query:read', async () => {
    expect((await query({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } }, null)).status).toBe(401);
    const narrow = await createKey(api.pool, api.config, tenant.user.id, ['person:read']);
    const { status, body } = await query({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } }, narrow);
    expect(status).toBe(403);
    expect(body.detail).toMatch(/query:read/);
    expect((await query({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } }, tenant.personalApiKey, other.project.id)).status).toBe(403);
  });
});

describe('POST .../query/ with an EventsQuery', () => {
  it('answers events as PostHog does: * as an object, columns as asked, types as names, newest first', async () => {
    const { status, body } = await query({ query: { kind: 'EventsQuery', select: ['*', 'event', 'properties.$browser -- Browser'], after: '-2h', limit: 2 } });
    expect(status).toBe(200);
    expect(body.columns).toEqual(['*', 'event', 'properties.$browser']);
    expect(body.types).toEqual([expect.stringMatching(/^Tuple/), 'String', 'Nullable(String)']);
    expect(body.results).toHaveLength(2);
    expect(body.hasMore).toBe(true);
    const [first] = body.results;
    expect(first[0]).toMatchObject({ event: '$pageview', distinct_id: 'bob', properties: { $browser: 'Firefox', amount: 12 }, timestamp: expect.stringMatching(/Z$/) });
    expect(first.slice(1)).toEqual(['$pageview', 'Firefox']);
  });

  it('groups by the other columns when one aggregates, and filters by event, where and properties', async () => {
    const { body } = await query({
      query: { kind: 'EventsQuery', select: ['distinct_id', 'count()'], event: '$pageview', where: ["properties.$browser != 'Safari'"], properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] },
    });
    expect(body.results).toEqual([['ann', 1]]);
  });

  it('refuses an orderBy with text after its expression, which was dropped silently', async () => {
    const { status, body } = await query({ query: { kind: 'EventsQuery', select: ['event'], orderBy: ['event DESC; DROP TABLE events'] } });
    expect(status).toBe(400);
    expect(body.detail).toMatch(/unexpected text after the ORDER BY expression/);
  });

  it('refuses a bad expression with a 400 naming it', async () => {
    const { status, body } = await query({ query: { kind: 'EventsQuery', select: ['nope(1)'] } });
    expect(status).toBe(400);
    expect(body.detail).toMatch(/Unsupported function call 'nope/);
  });
});

describe('query limits', () => {
  let limited: ApiHarness;
  let heavy: TestTenant;
  beforeAll(async () => {
    limited = await startApi({ queryMaxExecutionTimeS: 1, queryMaxMemoryBytes: 512 * 1024 * 1024, queryConcurrencyPerProject: 1, dashboardTileConcurrency: 1 });
    heavy = await createTestTenant(api.pool, api.config);
    // Two million rows read block by block: ClickHouse checks time limits and kills between blocks.
    await api.clickhouse.command(sql`INSERT INTO events (uuid, event, properties, timestamp, timestamp_ms, team_id, distinct_id, elements_chain, created_at, person_id, person_properties, person_created_at, group_0, group_1, group_2, group_3, group_4, inserted_at)
      SELECT generateUUIDv4(), 'e', '{}', now() - number % 3600, 0, ${heavy.project.id}, concat('d', toString(number % 1000)), '', now(), toUUID('00000000-0000-0000-0000-000000000000'), '{}', now(), '', '', '', '', '', now() FROM numbers(3000000)`);
  });
  afterAll(() => limited.close());
  const limitedQuery = (text: string, who: TestTenant = heavy, signal?: AbortSignal) =>
    fetch(`${limited.url}/api/environments/${who.project.id}/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${who.personalApiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: text } }),
      ...(signal && { signal }),
    });
  /** About five seconds of CPU over the heavy project's rows, in blocks of bounded memory; `n` tells runs apart in system.processes. */
  const slow = (n: number) => `SELECT sum(arraySum(arrayMap(x -> cityHash64(toString(x)) % ${n}, range(100 + cityHash64(distinct_id) % 2)))) FROM events`;
  /**
   * Fifteen seconds of CPU left alone, in blocks of under a gigabyte, so a stop within KILL_WAIT_MS
   * is the kill's doing even on a loaded CI machine.
   */
  const stoppable = (n: number) => `SELECT sum(arraySum(arrayMap(x -> cityHash64(toString(sipHash64(toString(x)))) % ${n}, range(100 + cityHash64(distinct_id) % 2)))) FROM events`;
  const KILL_WAIT_MS = 8_000;

  it('stops a query past its time in ClickHouse and says so', async () => {
    const response = await limitedQuery(slow(11));
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ code: 'query_timeout', detail: expect.stringMatching(/longer than 1 s/) });
  });

  it('refuses a query past its memory with a clear error', async () => {
    const response = await limitedQuery('SELECT length(groupArray(r)) FROM (SELECT arrayJoin(range(40000000)) AS r)');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'query_memory_limit' });
  });

  it("kills the query in ClickHouse when the client goes away, and lets the project's next query run", async () => {
    const patient = await startApi({ queryMaxExecutionTimeS: 60 });
    const clientQueryId = randomUUID();
    // Matched by id alone: 18.16 crashed reading the text of a query it was killing out of system.processes.
    const running = async () =>
      Number((await api.clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.processes WHERE startsWith(query_id, ${`${heavy.project.id}_${clientQueryId}_`})`))[0]!.n);
    try {
      const abort = new AbortController();
      const answer = fetch(`${patient.url}/api/environments/${heavy.project.id}/query/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${heavy.personalApiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query: stoppable(13) }, client_query_id: clientQueryId }),
        signal: abort.signal,
      }).catch(() => null);
      await waitFor(async () => (await running()) > 0, { what: 'the slow query to start', timeoutMs: 10_000 });
      abort.abort();
      await answer;
      // Killed, it is gone within a block or two.
      await waitFor(async () => (await running()) === 0, { what: 'the query to be killed', timeoutMs: KILL_WAIT_MS });
    } finally {
      await patient.close();
    }
    expect((await limitedQuery('SELECT 1')).status).toBe(200);
  });

  it("cancels a project's query by its client_query_id, and only that project's", async () => {
    const patient = await startApi({ queryMaxExecutionTimeS: 60 });
    const clientQueryId = randomUUID();
    const running = async () =>
      Number((await api.clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.processes WHERE startsWith(query_id, ${`${heavy.project.id}_${clientQueryId}_`})`))[0]!.n);
    const cancel = (who: TestTenant) => patient.request('DELETE', `/api/environments/${who.project.id}/query/${clientQueryId}/`, who.personalApiKey);
    try {
      const answer = patient.request('POST', `/api/environments/${heavy.project.id}/query/`, heavy.personalApiKey, { query: { kind: 'HogQLQuery', query: stoppable(19) }, client_query_id: clientQueryId });
      await waitFor(async () => (await running()) > 0, { what: 'the slow query to start', timeoutMs: 10_000 });
      // Another project naming the same id stops nothing of this one's.
      expect((await cancel(other)).status).toBe(204);
      expect(await running()).toBe(1);
      expect((await cancel(heavy)).status).toBe(204);
      await waitFor(async () => (await running()) === 0, { what: 'the query to be cancelled', timeoutMs: KILL_WAIT_MS });
      expect(await answer).toMatchObject({ status: 400, body: { code: 'query_cancelled' } });
      expect((await patient.request('DELETE', `/api/environments/${heavy.project.id}/query/a%20b/`, heavy.personalApiKey)).status).toBe(400);
    } finally {
      await patient.close();
    }
  });

  it('answers 429 to a project past its concurrent queries, while another project runs', async () => {
    const first = limitedQuery(slow(17));
    await waitFor(async () => Number((await limited.clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.processes WHERE startsWith(query_id, ${`${heavy.project.id}_`})`))[0]!.n) > 0, { what: 'the slow query to start', timeoutMs: 10_000 });
    const second = await limitedQuery('SELECT 1');
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({ code: 'concurrency_limit' });
    const theirs = await limitedQuery('SELECT count() FROM events', other);
    expect(theirs.status).toBe(200);
    expect(((await theirs.json()) as { results: unknown }).results).toEqual([[1]]);
    expect((await first).status).toBe(400);
  });
});
