import { Sql } from '@tributary/clickhouse';
import { TEAM, foreignValuesIn, unguardedReads, useTwoTeamFixture } from '../test/two-team-fixture.js';
import { actionExpr, parseSelect, printQuery, type ActionStep } from './index.js';

/**
 * Actions' steps run on a current ClickHouse (chdb's 26.x) over the two-project fixture: the URL
 * matchings and property filters count the project's own rows, and `matchesAction` prints under
 * the project's guard. The same conditions run on 18.16 in the api's actions integration test.
 */
const fixture = useTwoTeamFixture('chdb');

async function count(steps: ActionStep[]): Promise<{ rows: unknown[][]; sql: string }> {
  const condition = actionExpr({ id: 1, name: 'tested', steps }, { now: new Date('2024-02-01T00:00:00Z'), cohorts: new Map() });
  const ast = await parseSelect("SELECT distinct_id, event FROM events WHERE matchesAction('tested') ORDER BY timestamp");
  const sql = printQuery(ast, { teamId: TEAM, server: fixture.runner.server, actions: new Map([['tested', condition]]) }).clickhouse;
  const { data } = await fixture.clickhouse.queryCompact(Sql.trusted(sql));
  return { rows: data, sql };
}

it.each<[string, ActionStep[], unknown[][]]>([
  ['the URL contains', [{ event: '$pageview', url: 'example.com/home' }], [['alice', '$pageview'], ['alice-phone', '$pageview']]],
  ['the URL is exactly', [{ url: 'https://example.com/pricing', url_matching: 'exact' }], [['alice', '$pageview']]],
  ['the URL matches a regular expression', [{ url: '^https://shop\\.', url_matching: 'regex' }], [['bob', '$pageview']]],
  ['a property, or another step', [{ event: '$pageview', properties: [{ key: '$browser', value: 'edge' }] }, { event: 'purchase' }], [['bob-laptop', 'purchase'], ['anon', '$pageview']]],
  ['a URL only the other project has', [{ url: 'other-team-secret' }], []],
])('%s', async (_rule, steps, expected) => {
  const { rows, sql } = await count(steps);
  expect(rows).toEqual(expected);
  expect(foreignValuesIn(rows)).toEqual([]);
  expect(unguardedReads(sql)).toEqual([]);
});
