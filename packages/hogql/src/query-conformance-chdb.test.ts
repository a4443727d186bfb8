import { Sql } from '@tributary/clickhouse';
import { expectCorpusAnswers } from '../test/conformance-cases.js';
import { TEAM, createHogQLRunner, foreignValuesIn, unguardedReads, useTwoTeamFixture, type HogQLRunner } from '../test/two-team-fixture.js';

/**
 * The HogQL conformance corpus (`test/conformance-cases.ts`) on a current ClickHouse (chdb's
 * in-process 26.x), printed for it: the rows must be the ones 18.16 answers with
 * (`query-conformance.integration.test.ts`), on the same fixture rows.
 */
const fixture = useTwoTeamFixture('chdb');
let runner: HogQLRunner;
/** The same printer taking events' stored persons, overridden for the ids that moved (bob-laptop's events still carry bob). */
let personsOnEvents: HogQLRunner;
beforeAll(() => {
  ({ runner } = fixture);
  personsOnEvents = createHogQLRunner(fixture.clickhouse, runner.server, TEAM, undefined, 'person_id_override_properties_joined');
});

test('the engine is a current ClickHouse, and the runner prints for it', () => {
  expect(runner.server.major).toBeGreaterThanOrEqual(26);
});

describe('HogQL answers on ClickHouse 26 equal those on 18.16', () => {
  expectCorpusAnswers(() => runner);
});

describe('the same answers with persons on events (person_id_override_properties_joined)', () => {
  expectCorpusAnswers(() => personsOnEvents);
});

/** What HogQL offers that only a current ClickHouse runs: printed for it, answered from the project's rows alone. */
describe('what only a current ClickHouse runs', () => {
  const newer: [rule: string, hogql: string, rows: unknown[][]][] = [
    ['row_number over a partition', "SELECT distinct_id, event, row_number() OVER (PARTITION BY distinct_id ORDER BY timestamp) AS n FROM events WHERE distinct_id = 'alice' ORDER BY timestamp", [['alice', '$pageview', 1], ['alice', '$pageview', 2], ['alice', 'signup', 3]]],
    ['count over a partition keeps every row', "SELECT event, count() OVER (PARTITION BY event) AS c FROM events WHERE distinct_id LIKE 'bob%' ORDER BY timestamp", [['$pageview', 1], ['purchase', 1]]],
    ['a running sum over a named window with a frame', "SELECT sum(toFloat(properties.amount)) OVER w AS running FROM events WHERE distinct_id = 'alice' WINDOW w AS (ORDER BY timestamp ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) ORDER BY timestamp", [[5], [20], [120]]],
    ['lagInFrame reads the row before', "SELECT event, lagInFrame(event) OVER (ORDER BY timestamp ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS before FROM events WHERE distinct_id = 'alice' ORDER BY timestamp", [['$pageview', ''], ['$pageview', '$pageview'], ['signup', '$pageview']]],
    ['a window over the whole answer counts only the project\'s rows', 'SELECT count() OVER () AS total FROM events LIMIT 1', [[8]]],
    ['JSONExtractInt', "SELECT JSONExtractInt(properties, 'amount') FROM events WHERE distinct_id = 'alice' ORDER BY timestamp", [[5], [15], [100]]],
    ['JSONExtractString of a nested key, JSONHas', "SELECT JSONExtractString(properties, 'a', 'b') FROM events WHERE JSONHas(properties, 'a')", [['deep']]],
    ['four tables in one SELECT', "SELECT e.distinct_id, p.properties.email, g.properties.name FROM events AS e JOIN person_distinct_ids AS d ON e.distinct_id = d.distinct_id JOIN persons AS p ON d.person_id = p.id JOIN groups AS g ON e.$group_0 = g.key WHERE e.event = 'purchase'", [['bob-laptop', 'alice@example.com', 'Globex']]],
  ];

  it.each(newer)('%s', async (_rule, hogql, rows) => {
    const result = await runner.run(hogql);
    expect(result.rows).toEqual(rows);
    expect(foreignValuesIn(result.rows)).toEqual([]);
    expect(unguardedReads(result.sql)).toEqual([]);
  });
});

/** Where 26 behaves as 18.16 does in ways the printer's rules rest on: the rules stay on both. */
describe('18.16 behaviour ClickHouse 26 keeps', () => {
  const raw = async (statement: string) => (await fixture.clickhouse.queryCompact(Sql.trusted(statement), { settings: { output_format_json_quote_64bit_integers: 0 } })).data;

  it('a column alias stands for its name in WHERE before the stored column: the printer refuses an alias named team_id on every server', async () => {
    expect(await raw(`SELECT ${TEAM + 1} AS team_id FROM events WHERE team_id = ${TEAM + 1} LIMIT 1`)).toEqual([[TEAM + 1]]);
    expect(await raw(`SELECT ${TEAM + 1} AS team_id FROM events WHERE team_id = ${TEAM} LIMIT 1`)).toEqual([]);
  });

  it("an unmatched LEFT JOIN row holds the type's default, not NULL (a zero DateTime reads 1970-01-01 on 26, 0000-00-00 on 18.16)", async () => {
    expect(await raw("SELECT b.d FROM (SELECT 1 AS k) AS a LEFT JOIN (SELECT 2 AS k, toDateTime('2024-01-01 00:00:00', 'UTC') AS d) AS b ON a.k = b.k")).toEqual([['1970-01-01 00:00:00']]);
  });
});
