import fc from 'fast-check';
import { PropertyFilterError } from '@tributary/property-filters';
import { MARKER, OTHER_TEAM, PERSON, TEAM, foreignValuesIn, tableNamesOutsideFrom, unguardedReads, useTwoTeamFixture, type Engine, type HogQLRunner } from './two-team-fixture.js';
import { HogQLError, parseSelect, printHogQL, printQuery, propertyFilterExprs, type FilterContext, type SelectQuery } from '../src/index.js';

/**
 * No HogQL query a project sends reads another project's rows: each either is refused with a
 * HogQLError or runs with every stored table guarded, and its answer holds no value the project's
 * rows do not (`foreignValuesIn`: the other project's markers, and uuids and days not the project's).
 * First a list of escape attempts, then queries generated from a small grammar over both projects' values.
 */
export function isolationSuite(engine: Engine): void {
  const fixture = useTwoTeamFixture(engine);
  let runner: HogQLRunner;
  beforeAll(() => {
    ({ runner } = fixture);
  });

  /** An error ClickHouse answered with (its code in the message, or parsed by the client), not a failure to reach it. */
  const isClickHouseRefusal = (error: unknown) => /Code: \d+/.test(String(error)) || /^\d+$/.test(String((error as { code?: unknown }).code));

  type Outcome = { refused: HogQLError } | { failed: string; sql: string } | { rows: unknown[][]; sql: string };

  async function attempt(hogql: string, values?: Record<string, unknown>): Promise<Outcome> {
    let sql = '';
    try {
      sql = printQuery(await parseSelect(hogql), { teamId: TEAM, server: runner.server, ...(values && { values }) }).clickhouse;
      const { rows } = await runner.run(hogql, values);
      return { rows, sql };
    } catch (error) {
      if (error instanceof HogQLError) return { refused: error };
      // ClickHouse refusing the printed query for its types (the endpoint's 400): the SQL is still checked.
      if (sql && isClickHouseRefusal(error)) return { failed: String(error), sql };
      throw error;
    }
  }

  /** What a run must show: every read guarded, none of the other project's values. */
  function expectIsolated(outcome: Outcome): void {
    if ('refused' in outcome) return;
    expect(unguardedReads(outcome.sql)).toEqual([]);
    expect(tableNamesOutsideFrom(outcome.sql)).toEqual([]);
    if ('rows' in outcome) expect(foreignValuesIn(outcome.rows)).toEqual([]);
  }

  describe('escape attempts are refused or answer from the project alone', () => {
    const injected = { quote: "' OR 1=1 --", list: ["a') OR (1=1"], team: OTHER_TEAM };
    // `runs` gives the rows the project's own data answers with; `refused` a part of the printer's
    // error; `fails` a part of ClickHouse's (a value of the wrong type, answered as a 400).
    const attempts: [attempt: string, hogql: string, expected: { runs: number } | { refused: string } | { fails: string }][] = [
      ["naming another project's id", `SELECT * FROM events WHERE team_id = ${OTHER_TEAM}`, { refused: 'Unable to resolve field: team_id' }],
      ["OR with another project's id", `SELECT count() FROM events WHERE (1 = 1) OR (team_id = ${OTHER_TEAM})`, { refused: 'Unable to resolve field: team_id' }],
      ['team_id inside a function', "SELECT * FROM events WHERE toString(team_id) = 'x'", { refused: 'Unable to resolve field: team_id' }],
      ['team_id qualified by the table', 'SELECT events.team_id FROM events', { refused: 'Unable to resolve field: team_id' }],
      ['team_id through the person join', 'SELECT * FROM events WHERE person.team_id = 1', { refused: 'Field not found: person.team_id' }],
      ['team_id through pdi', 'SELECT * FROM events WHERE pdi.team_id = 1', { refused: 'Field not found: pdi.team_id' }],
      ['LIMIT BY team_id', 'SELECT * FROM events LIMIT 1 BY team_id', { refused: 'Unable to resolve field: team_id' }],
      ['a column aliased team_id, standing in for the guard', `SELECT ${OTHER_TEAM} AS \`team_id\`, * FROM events`, { refused: 'team_id cannot name a column' }],
      ['a column aliased team_id in a subquery', `SELECT c FROM (SELECT count() AS c, ${TEAM} AS \`team_id\` FROM events)`, { refused: 'team_id cannot name a column' }],
      ['an ARRAY JOIN aliased team_id', `SELECT * FROM events ARRAY JOIN [${TEAM}] AS \`team_id\``, { refused: 'team_id cannot name a column' }],
      ['a property named team_id', 'SELECT properties.team_id FROM events', { refused: 'team_id cannot name a column' }],
      ['a property named team_id, aliased', `SELECT properties.team_id AS t FROM events WHERE person.properties.team_id = ${OTHER_TEAM}`, { runs: 0 }],
      ['a lambda argument named team_id', `SELECT * FROM events WHERE arrayExists(\`team_id\` -> \`team_id\` = ${TEAM}, [${TEAM}])`, { runs: 8 }],
      ['1=1 OR 1=1', 'SELECT * FROM events WHERE 1=1 OR 1=1', { runs: 8 }],
      ['OR 1 = 1 after a condition', "SELECT * FROM events WHERE distinct_id = 'x' OR 1 = 1", { runs: 8 }],
      ['UNION ALL of every table', 'SELECT distinct_id FROM events UNION ALL SELECT distinct_id FROM person_distinct_ids UNION ALL SELECT key FROM groups UNION ALL SELECT properties FROM persons', { runs: 18 }],
      ['UNION ALL of a narrow and a wide select', "SELECT * FROM events WHERE event = 'x' UNION ALL SELECT * FROM events", { runs: 8 }],
      ['UNION ALL with a system table', 'SELECT * FROM events WHERE 1=1 UNION ALL SELECT * FROM system.tables', { refused: 'Unknown table "system.tables".' }],
      ['a subquery in FROM', 'SELECT * FROM (SELECT * FROM events) WHERE 1 = 1', { runs: 8 }],
      ['a subquery after IN with OR 1=1', 'SELECT * FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE 1=1 OR 1=1)', { runs: 8 }],
      ['a scalar subquery', 'SELECT (SELECT count() FROM events) AS c', { runs: 1 }],
      ['a self-join of events', 'SELECT * FROM events AS e JOIN events AS f ON e.distinct_id = f.distinct_id', { runs: 14 }],
      ['a comma join', 'SELECT * FROM events, persons', { runs: 16 }],
      ['a CROSS JOIN', 'SELECT * FROM events CROSS JOIN groups', { runs: 24 }],
      ['PREWHERE', 'SELECT * FROM events PREWHERE 1 = 1', { runs: 8 }],
      ['a -- comment hiding the rest', `SELECT * FROM events -- WHERE team_id = ${OTHER_TEAM}`, { runs: 8 }],
      ['/* */ comments', `SELECT * FROM events /* */ WHERE 1=1 /* OR team_id = ${OTHER_TEAM} */`, { runs: 8 }],
      ['an unterminated comment', 'SELECT * FROM events WHERE 1=1 /* unterminated', { refused: 'Syntax error' }],
      ['a string ending in a backslash, then OR', "SELECT * FROM events WHERE event = '\\\\' OR 1=1 --'", { runs: 8 }],
      ["a string closed by '' then OR", "SELECT 'a'' OR team_id != 0 OR ''' FROM events", { runs: 8 }],
      ["a string escaping its quotes with \\'", "SELECT * FROM events WHERE distinct_id = 'a\\' OR 1=1 OR \\'b'", { runs: 0 }],
      ["'\\'' left open", "SELECT '\\\\'' FROM events", { refused: 'Syntax error' }],
      ['a backquoted table', 'SELECT * FROM `events` WHERE 1=1 --', { runs: 8 }],
      ['SQL inside a backquoted table name', 'SELECT * FROM `events WHERE 1=1 --`', { refused: 'Unknown table "events WHERE 1=1 --".' }],
      ['SQL inside a backquoted table alias', `SELECT * FROM \`events\` AS \`events WHERE 1=1 OR team_id = ${OTHER_TEAM} --\``, { runs: 8 }],
      ['SQL inside a backquoted field', 'SELECT `distinct_id FROM events --` FROM events', { refused: 'Unable to resolve field: distinct_id FROM events --' }],
      ['full-width letters in a string', "SELECT * FROM events WHERE distinct_id = 'ａｌｉｃｅ' OR event = 'ｅｖｅｎｔ'", { runs: 0 }],
      ['full-width letters in a table name', 'SELECT * FROM ｅvents', { refused: 'Syntax error' }],
      ['a NUL escape in a string', "SELECT * FROM events WHERE distinct_id = 'alice\\0' OR 1 = 1", { runs: 8 }],
      ['a non-ASCII field', 'SELECT `évent` FROM events', { refused: 'Unable to resolve field: évent' }],
      ['a non-ASCII alias', "SELECT 'é' AS `名前` FROM events", { runs: 8 }],
      ['a placeholder value with a quote', 'SELECT * FROM events WHERE distinct_id = {quote}', { runs: 0 }],
      ['a placeholder list with a bracket', 'SELECT * FROM events WHERE distinct_id IN {list}', { runs: 0 }],
      ["a placeholder of another project's id", `SELECT * FROM events WHERE 1 = 1 OR {team} = ${OTHER_TEAM}`, { runs: 8 }],
      ['subqueries eight deep', `SELECT * FROM ${'(SELECT * FROM '.repeat(7)}events${')'.repeat(7)}`, { runs: 8 }],
      ['a CTE named like a table', 'WITH events AS (SELECT * FROM person_distinct_ids) SELECT * FROM events', { runs: 5 }],
      ['a CTE shadowing persons', 'WITH persons AS (SELECT distinct_id AS id FROM events) SELECT * FROM persons', { runs: 8 }],
      ['a CTE reading the table it shadows', 'WITH events AS (SELECT * FROM events) SELECT * FROM events', { refused: 'nests too deeply' }],
      ['a CTE aliased as another table', 'WITH groups AS (SELECT * FROM events WHERE 1=1 OR 1=1) SELECT * FROM groups AS persons', { runs: 8 }],
      ['a CTE joined to itself under table names', 'WITH x AS (SELECT * FROM events) SELECT * FROM x AS events JOIN x AS persons ON events.uuid = persons.uuid', { runs: 8 }],
      ['a column aliased like a table', 'SELECT distinct_id AS events FROM events AS person_distinct_ids', { runs: 8 }],
      ['persons aliased as events', 'SELECT * FROM persons AS events', { runs: 2 }],
      ['groups aliased as `events`', 'SELECT * FROM groups AS `events` WHERE 1=1', { runs: 3 }],
      ['events aliased as person', 'SELECT * FROM events AS person', { runs: 8 }],
      ["events aliased as the printer's own subquery names", 'SELECT * FROM events AS `__e`', { runs: 8 }],
      ["events aliased as the printer's lazy join", 'SELECT person.properties.email FROM events AS `events__lazy`', { runs: 8 }],
      ["events aliased as the lazy join's inner table", 'SELECT person.properties.email FROM events AS `__pdi`', { runs: 8 }],
      ['SAMPLE of every event', 'SELECT * FROM events SAMPLE 1', { runs: 8 }],
      ['SAMPLE with OR 1=1 after it', 'SELECT * FROM events SAMPLE 1/1 OFFSET 0 WHERE 1=1 OR 1=1', { runs: 8 }],
      ['a sampled self-join, each side sampled apart', 'SELECT * FROM events AS e SAMPLE 1 JOIN events AS f SAMPLE 1/1 ON e.distinct_id = f.distinct_id', { runs: 14 }],
      ['two halves of a SAMPLE together are every event', 'SELECT * FROM events SAMPLE 1/2 UNION ALL SELECT * FROM events SAMPLE 1/2 OFFSET 1/2', { runs: 8 }],
      ['SAMPLE of a CTE named like events', 'WITH events AS (SELECT * FROM person_distinct_ids) SELECT * FROM events SAMPLE 1/2', { refused: 'SAMPLE is only supported on the events table' }],
      ['SAMPLE of persons', 'SELECT * FROM persons SAMPLE 1', { refused: 'SAMPLE is only supported on the events table' }],
      ['a database-qualified table', 'SELECT * FROM tributary.events', { refused: 'Unknown table "tributary.events".' }],
      ['a second statement', 'SELECT * FROM events; DROP TABLE events', { refused: 'Syntax error' }],
      ['SETTINGS', 'SELECT * FROM events WHERE 1 = 1 SETTINGS max_threads = 1', { refused: 'Not supported' }],
      ['FORMAT', 'SELECT * FROM events WHERE 1 = 1 FORMAT JSON', { refused: 'Syntax error' }],
      ['INTO OUTFILE', "SELECT * FROM events INTO OUTFILE '/tmp/x'", { refused: 'Syntax error' }],
      ['GLOBAL IN', 'SELECT * FROM events WHERE distinct_id GLOBAL IN (SELECT distinct_id FROM events)', { refused: 'Syntax error' }],
      ['a 1 MB query', `SELECT * FROM events WHERE distinct_id = '${'x'.repeat(1_000_000)}' OR 1 = 1`, { refused: 'characters long' }],
      ["another project's distinct id", `SELECT * FROM person_distinct_ids WHERE distinct_id = '${MARKER}'`, { runs: 0 }],
      ["another project's person's email", `SELECT * FROM events WHERE person.properties.email LIKE '%${MARKER}%'`, { runs: 0 }],
      // ClickHouse reads a name on the right of IN as a table of its database, every project's rows:
      // each form is printed as has() over a value, a guarded subquery, or refused.
      ['IN a qualified column, as a table of that name', 'SELECT * FROM events AS t WHERE t.distinct_id IN t.distinct_id', { fails: 'must be an array' }],
      ['IN a bracketed qualified column', 'SELECT * FROM events AS t WHERE t.distinct_id IN (t.distinct_id)', { fails: 'must be an array' }],
      ['IN a column named like a stored table', 'SELECT * FROM events WHERE distinct_id IN (SELECT distinct_id AS person_distinct_id FROM events)', { runs: 8 }],
      ['IN an alias named like a stored table', 'SELECT distinct_id AS person_distinct_id FROM events WHERE distinct_id IN person_distinct_id', { fails: 'must be an array' }],
      ['NOT IN an alias named like a stored table', "SELECT ['x'] AS person_distinct_id FROM events WHERE distinct_id NOT IN person_distinct_id", { runs: 8 }],
      ['IN an array of one column', 'SELECT * FROM events AS person_distinct_id WHERE distinct_id IN [distinct_id]', { runs: 8 }],
      ['in() with a column', 'SELECT * FROM events AS t WHERE in(t.distinct_id, t.distinct_id)', { fails: 'must be an array' }],
      ['notIn() with an array column', 'SELECT * FROM events AS t WHERE notIn(t.distinct_id, (splitByChar(\'@\', t.distinct_id)))', { runs: 0 }],
      ['IN a tuple of the right arity over another table', 'SELECT * FROM events AS person_distinct_id WHERE (distinct_id, person_id) IN person_distinct_id.distinct_id', { fails: 'must be an array' }],
      ['IN a lambda argument', "SELECT * FROM events WHERE arrayExists(person_distinct_id -> distinct_id IN person_distinct_id, [['alice']])", { runs: 3 }],
      ['IN a stored table by its HogQL name', 'SELECT * FROM events WHERE distinct_id IN person_distinct_ids', { refused: 'not the table person_distinct_ids' }],
      ['IN a stored table by its ClickHouse name', 'SELECT * FROM events WHERE distinct_id IN person_distinct_id', { refused: 'Unable to resolve field: person_distinct_id' }],
      ['IN a CTE, as its rows', `WITH s AS (SELECT distinct_id FROM person_distinct_ids) SELECT * FROM events WHERE distinct_id IN s`, { runs: 7 }],
      ['IN a column CTE naming a table', 'WITH person_distinct_id AS person_distinct_id SELECT * FROM events WHERE distinct_id IN person_distinct_id', { refused: 'uses its CTEs more than' }],
      ['IN a scalar subquery', 'SELECT * FROM events WHERE distinct_id IN (SELECT max(distinct_id) FROM events)', { runs: 1 }],
      ['IN in a CTE', 'WITH s AS (SELECT * FROM events AS t WHERE t.distinct_id IN t.distinct_id) SELECT count() FROM s', { fails: 'must be an array' }],
      ['joinGet of a stored table', "SELECT joinGet('person_distinct_id', 'person_id', distinct_id) FROM events", { refused: "Unsupported function call 'joinGet(...)'" }],
      ['dictGet', "SELECT dictGetString('persons', 'email', toUInt64(1)) FROM events", { refused: "Unsupported function call 'dictGetString(...)'" }],
      ['globalIn() with a table', 'SELECT * FROM events WHERE globalIn(distinct_id, person_distinct_id)', { refused: "Unsupported function call 'globalIn(...)'" }],
      ['hasColumnInTable', "SELECT hasColumnInTable('tributary', 'person', 'properties')", { refused: "Unsupported function call 'hasColumnInTable(...)'" }],
      ['a JOIN of a stored table by its ClickHouse name', 'SELECT * FROM events AS e JOIN person_distinct_id AS d ON e.distinct_id = d.distinct_id', { refused: 'Unknown table "person_distinct_id".' }],
      ['a JOIN of a database-qualified table', 'SELECT * FROM events AS e JOIN tributary.person AS p ON e.person_id = p.id', { refused: 'Unknown table "tributary.person".' }],
      // sessions is a select over events: the other project's events of a session id of the project's ('s1') never join its session.
      ['every session', 'SELECT * FROM sessions', { runs: 1 }],
      ["a session's entry and counts", "SELECT session_id, $entry_current_url, $entry_utm_source, $pageview_count, $session_duration, $channel_type FROM sessions WHERE session_id = 's1' AND $pageview_count = 2 AND $session_duration = 3600", { runs: 1 }],
      ['sessions joined to events', 'SELECT s.session_id, e.event FROM sessions AS s JOIN events AS e ON s.session_id = e.$session_id', { runs: 2 }],
      ['events joined to sessions', 'SELECT e.event, s.$channel_type FROM events AS e LEFT JOIN sessions AS s ON e.$session_id = s.session_id', { runs: 8 }],
      ['sessions in a subquery', 'SELECT count() AS c FROM (SELECT * FROM sessions WHERE 1 = 1 OR 1 = 1) HAVING c = 1', { runs: 1 }],
      ['sessions IN a subquery', 'SELECT * FROM events WHERE $session_id IN (SELECT session_id FROM sessions)', { runs: 2 }],
      ['sessions under a CTE named events', 'WITH events AS (SELECT distinct_id AS x FROM person_distinct_ids) SELECT * FROM sessions', { runs: 1 }],
      ['a CTE named sessions', 'WITH sessions AS (SELECT distinct_id FROM events) SELECT * FROM sessions', { runs: 8 }],
      ['IN sessions by its table name', 'SELECT * FROM events WHERE $session_id IN sessions', { refused: 'not the table sessions' }],
      ['IN in a saved-insight-like subquery of a subquery', 'SELECT * FROM (SELECT distinct_id AS groups FROM events) WHERE groups IN groups', { fails: 'must be an array' }],
    ];

    it.each(attempts)('%s', async (_attempt, hogql, expected) => {
      const outcome = await attempt(hogql, injected);
      if ('refused' in expected) {
        expect('refused' in outcome ? outcome.refused.message : outcome).toContain(expected.refused);
      } else if ('fails' in expected) {
        expect('failed' in outcome ? outcome.failed : outcome).toContain(expected.fails);
      } else {
        expect('rows' in outcome ? outcome.rows.length : outcome).toBe(expected.runs);
      }
      expectIsolated(outcome);
    });
  });

  /**
   * Random queries over both projects' values: tables, aliases (table names among them), joins,
   * subqueries, unions, IN subqueries and CTEs, with conditions naming either project's values.
   * Fields are compared as text, so nearly every query runs rather than failing on types.
   */
  describe("generated queries never answer with another project's values", () => {
    type Table = 'events' | 'persons' | 'person_distinct_ids' | 'groups' | 'sessions';
    const FIELDS: Record<Table, string[]> = {
      events: ['event', 'distinct_id', 'properties.$browser', 'properties.plan', 'properties.a.b', 'person.properties.email', 'person.properties.plan', 'person_id', 'pdi.person_id', 'uuid', 'timestamp', '$group_0', 'properties'],
      persons: ['id', 'properties.email', 'properties.plan', 'created_at', 'is_identified', 'properties'],
      person_distinct_ids: ['distinct_id', 'person_id'],
      groups: ['key', 'index', 'properties.name', 'properties.industry', 'created_at', 'properties'],
      sessions: ['session_id', 'distinct_id', '$start_timestamp', '$entry_current_url', '$entry_utm_source', '$end_current_url', '$pageview_count', '$is_bounce', '$channel_type'],
    };
    const TABLE_NAMES = Object.keys(FIELDS) as Table[];
    /** Text literals of both projects: conditions naming the other project's must find nothing of it. */
    const LITERALS = ['alice', 'bob', 'anon', '$pageview', 'signup', 'purchase', 'acme', 'Chrome', 'pro', 'alice@example.com', PERSON.alice, MARKER, `${MARKER}-event`, `${MARKER}-browser`, `${MARKER}-group`, `${MARKER}@example.com`, '999999', String(TEAM), String(OTHER_TEAM), '1', '0'];
    const FRAGMENTS = ['a', 'ali', 'other', 'secret', '@', '-', '2031', '2024', '9'];
    /** Table aliases, table names among them. */
    const ALIASES = ['a', 'b', 't', 'events', 'persons', 'groups', 'person_distinct_ids', 'person', 'pdi'];
    /** Column aliases: the stored columns' names, and most often the guard's. */
    const COLUMN_ALIASES = ['x', 'event', 'distinct_id', 'person_id', 'properties', 'timestamp', 'events', 'team_id', 'team_id', 'team_id'];
    /** Joins whose keys have one type. */
    const JOINS: [Table, string, Table, string][] = [
      ['events', 'distinct_id', 'person_distinct_ids', 'distinct_id'],
      ['person_distinct_ids', 'person_id', 'persons', 'id'],
      ['events', '$group_0', 'groups', 'key'],
      ['events', 'person_id', 'persons', 'id'],
      ['events', 'event', 'events', 'event'],
      ['events', '$session_id', 'sessions', 'session_id'],
      ['sessions', 'distinct_id', 'person_distinct_ids', 'distinct_id'],
    ];

    const literal = fc.constantFrom(...LITERALS).map((value) => `'${value.replace(/'/g, "\\'")}'`);

    const condition = (alias: string, table: Table): fc.Arbitrary<string> => {
      const field = fc.constantFrom(...FIELDS[table]).map((f) => `toString(${alias}.${f})`);
      const leaf = fc.oneof(
        fc.tuple(field, literal).map(([f, l]) => `${f} = ${l}`),
        fc.tuple(field, literal).map(([f, l]) => `${f} != ${l}`),
        fc.tuple(field, literal, literal).map(([f, l1, l2]) => `${f} IN (${l1}, ${l2})`),
        fc.tuple(field, fc.constantFrom(...FRAGMENTS)).map(([f, x]) => `${f} LIKE '%${x}%'`),
        fc.constantFrom(...FIELDS[table]).map((f) => `${alias}.${f} IS NULL`),
        fc.constantFrom('1 = 1', '1 = 0'),
        // Names on the right of IN: ClickHouse would read each as a table, so the printer must not print one there.
        fc.tuple(field, fc.constantFrom(...FIELDS[table]), fc.constantFrom('IN', 'NOT IN'), fc.constantFrom('%s', '(%s)', '[%s]', "(%s, 'x')")).map(
          ([f, g, op, form]) => `${f} ${op} ${form.replace('%s', `${alias}.${g}`)}`,
        ),
        fc.tuple(field, fc.constantFrom(...FIELDS[table]), fc.constantFrom('in', 'notIn')).map(([f, g, fn]) => `${fn}(${f}, ${alias}.${g})`),
        fc.tuple(field, fc.constantFrom(...COLUMN_ALIASES, 'person_distinct_id', 'person', 'groups')).map(([f, name]) => `arrayExists(\`${name}\` -> ${f} IN \`${name}\`, [['alice']])`),
        fc.tuple(field, fc.constantFrom(...TABLE_NAMES), literal).chain(([f, inner, l]) =>
          fc.constantFrom(...FIELDS[inner]).map((g) => `${f} IN (SELECT toString(${g}) FROM ${inner} WHERE toString(${g}) != ${l})`),
        ),
      );
      return fc.oneof(
        { weight: 3, arbitrary: leaf },
        fc.tuple(leaf, leaf).map(([x, y]) => `(${x}) OR (${y})`),
        fc.tuple(leaf, leaf).map(([x, y]) => `(${x}) AND (${y})`),
        leaf.map((x) => `NOT (${x})`),
      );
    };

    const where = (alias: string, table: Table) => fc.option(condition(alias, table), { nil: undefined }).map((c) => (c ? ` WHERE ${c}` : ''));
    /** Maybe the project's own id as a column, under a name: named team_id, it would stand in for the guard. */
    const idColumn = fc.option(fc.constantFrom(...COLUMN_ALIASES), { nil: undefined, freq: 2 }).map((as) => (as ? `, ${TEAM} AS \`${as}\`` : ''));
    /** Fields of the table, each maybe renamed. */
    const columns = (alias: string, table: Table) =>
      fc
        .tuple(fc.uniqueArray(fc.tuple(fc.constantFrom(...FIELDS[table]), fc.option(fc.constantFrom(...COLUMN_ALIASES), { nil: undefined })), { minLength: 1, maxLength: 3, selector: ([f]) => f }), idColumn)
        .map(([fields, id]) => fields.map(([f, as]) => `${alias}.${f}${as ? ` AS \`${as}\`` : ''}`).join(', ') + id);
    /** A table (events twice as often: its guard is the one beside the query's own columns) and an alias. */
    const source = fc.tuple(fc.constantFrom<Table>('events', ...TABLE_NAMES), fc.constantFrom(...ALIASES));

    /** One select of one table: plain, `*`, or grouped. */
    const single = source.chain(([table, alias]) =>
      fc.oneof(
        fc.tuple(columns(alias, table), where(alias, table)).map(([cs, w]) => `SELECT ${cs} FROM ${table} AS ${alias}${w}`),
        fc.tuple(idColumn, where(alias, table)).map(([id, w]) => `SELECT *${id} FROM ${table} AS ${alias}${w}`),
        fc.tuple(fc.constantFrom(...FIELDS[table]), where(alias, table)).map(([f, w]) => `SELECT toString(${alias}.${f}) AS k, count() AS c FROM ${table} AS ${alias}${w} GROUP BY k`),
      ),
    );
    /** One text column, so any two union. */
    const textColumn = source.chain(([table, alias]) =>
      fc.tuple(fc.constantFrom(...FIELDS[table]), where(alias, table)).map(([f, w]) => `SELECT toString(${alias}.${f}) AS v FROM ${table} AS ${alias}${w}`),
    );

    const join = fc.tuple(fc.constantFrom(...JOINS), fc.constantFrom('JOIN', 'LEFT JOIN', 'INNER JOIN')).chain(([[left, leftKey, right, rightKey], type]) =>
      fc.tuple(columns('l', left), columns('r', right), where('l', left), fc.option(condition('r', right), { nil: undefined })).map(
        ([lc, rc, w, rw]) => `SELECT ${lc}, ${rc} FROM ${left} AS l ${type} ${right} AS r ON l.${leftKey} = r.${rightKey}${w}${rw ? `${w ? ' AND' : ' WHERE'} ${rw}` : ''}`,
      ),
    );

    /** On a server with window functions: a window over a table's rows, partitioned by one of its fields. */
    const windowed = source.chain(([table, alias]) =>
      fc.tuple(fc.constantFrom(...FIELDS[table]), where(alias, table)).map(([f, w]) => `SELECT toString(${alias}.${f}) AS k, count() OVER (PARTITION BY toString(${alias}.${f})) AS c FROM ${table} AS ${alias}${w}`),
    );

    const query = fc.oneof(
      { weight: 3, arbitrary: single },
      ...(engine === 'chdb' ? [windowed, windowed.map((inner) => `SELECT * FROM (${inner}) AS s`)] : []),
      join,
      { weight: 2, arbitrary: single.map((inner) => `SELECT * FROM (${inner}) AS s`) },
      fc.tuple(textColumn, textColumn).map(([x, y]) => `${x} UNION ALL ${y}`),
      fc.tuple(textColumn, textColumn, fc.constantFrom(...LITERALS)).map(([x, y, l]) => `SELECT v FROM (${x} UNION ALL ${y}) WHERE v != '${l}'`),
      fc.tuple(single, fc.constantFrom('c', 'events', 'persons', 'groups')).map(([inner, name]) => `WITH ${name} AS (${inner}) SELECT * FROM ${name}`),
      fc.tuple(textColumn, fc.constantFrom(...TABLE_NAMES)).chain(([inner, table]) =>
        fc.constantFrom(...FIELDS[table]).map((f) => `SELECT * FROM ${table} AS o WHERE toString(o.${f}) IN (${inner})`),
      ),
    );

    it('holds for 100 queries', async () => {
      const outcomes = { ran: 0, refused: 0, failed: 0 };
      const started = Date.now();
      await fc.assert(
        fc.asyncProperty(query, async (hogql) => {
          // The printed SQL is checked whether or not ClickHouse then runs it: a name read as a
          // table answers with an error for one arity and with another project's rows for another.
          try {
            expect(tableNamesOutsideFrom(printQuery(await parseSelect(hogql), { teamId: TEAM, server: runner.server }).clickhouse)).toEqual([]);
          } catch (error) {
            if (!(error instanceof HogQLError)) throw error;
          }
          let outcome: Outcome;
          try {
            outcome = await attempt(hogql);
          } catch (error) {
            // ClickHouse refusing a query (a type it cannot compare, an 18.16 limit) answers nothing.
            if (!isClickHouseRefusal(error)) throw error;
            outcomes.failed++;
            return;
          }
          if ('refused' in outcome) outcomes.refused++;
          else outcomes.ran++;
          expectIsolated(outcome);
        }),
        { numRuns: 100 },
      );
      expect(Date.now() - started).toBeLessThan(60_000);
      // Most queries must run, or the property proves little.
      expect(outcomes.ran).toBeGreaterThanOrEqual(50);
    }, 90_000);
  });

  /**
   * Property filters of every type become HogQL (`propertyFilterExprs`) that the printer guards like
   * any query: generated ones, naming both projects' keys and values, never answer with the other's.
   */
  describe("generated property filters never answer with another project's values", () => {
    const context: FilterContext = {
      now: new Date('2024-02-01T00:00:00Z'),
      cohorts: new Map([
        [1, { id: 1, static: true, distinctIds: ['alice', 'bob-laptop'] }],
        [2, { id: 2, static: false, filters: { type: 'OR', values: [{ key: 'plan', value: 'pro' }, { key: 'email', operator: 'icontains', value: MARKER }] } }],
      ]),
    };
    const value = fc.constantFrom<unknown>('Chrome', 'pro', 'acme', 'Acme Inc', 'tech', MARKER, `${MARKER}-browser`, 5, '999999', ['pro', MARKER], '^a', '-7d', '2024-01-02');
    const operator = fc.constantFrom('exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'lt', 'is_set', 'is_not_set', 'is_date_after');
    const key = fc.constantFrom('$browser', 'plan', 'amount', 'name', 'industry', 'email', 'a');
    const filter = fc.oneof(
      fc.record({ type: fc.constantFrom('event', 'person'), key, operator, value }),
      fc.record({ type: fc.constant('group'), group_type_index: fc.constantFrom(0, 1), key, operator, value }),
      fc.record({ type: fc.constant('element'), key: fc.constantFrom('tag_name', 'text', 'href'), operator, value }),
      fc.record({ type: fc.constant('cohort'), key: fc.constant('id'), operator: fc.constantFrom('in', 'not_in'), value: fc.constantFrom(1, 2) }),
    );
    const columns = ['uuid', 'event', 'distinct_id', 'person_id', 'person.properties', 'poe.properties', '$group_0', 'properties'].map((f): SelectQuery['select'][number] => ({ node: 'Field', chain: f.split('.') }));

    it('holds for 40 filter lists, each printed as HogQL and run', async () => {
      let ran = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(filter, { minLength: 1, maxLength: 3 }), async (filters) => {
          let exprs;
          try {
            exprs = propertyFilterExprs(filters, context);
          } catch (error) {
            // A value its operator does not take is the client's 400: nothing is read.
            if (error instanceof PropertyFilterError) return;
            throw error;
          }
          const query: SelectQuery = { node: 'SelectQuery', select: columns, select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } }, where: { node: 'And', exprs } };
          const outcome = await attempt(printHogQL(query));
          if ('rows' in outcome) ran++;
          expectIsolated(outcome);
        }),
        { numRuns: 40 },
      );
      expect(ran).toBeGreaterThanOrEqual(20);
    }, 90_000);
  });
}
