import { loadHogQLParser, parseSelect, printQuery } from './index.js';

/**
 * Which pages newest first the printer bounds below by their last row's time (`newest-first.ts`):
 * those whose conditions are cheap to test twice. Their answers on real rows are the conformance
 * corpus's `newestFirst` cases.
 */
const print = async (text: string) => printQuery(await parseSelect(text), { teamId: 42 }).clickhouse;

beforeAll(async () => {
  await loadHogQLParser();
});

const BOUND = 'PREWHERE (`events`.`timestamp` >= ((SELECT min(`__subquery_0`.`timestamp`) AS `min(timestamp)` FROM (SELECT `events`.`timestamp` AS `timestamp` FROM events AS `events` WHERE `events`.team_id = 42';

test('a page newest first reads its columns only at or after the time of its last row, taken from the project alone', async () => {
  expect(await print('SELECT uuid, properties.$current_url FROM events ORDER BY timestamp DESC LIMIT 100')).toContain(`${BOUND} ORDER BY \`timestamp\` DESC LIMIT 100)`);
});

test("the bound's rows are the page's and those before it: the printer's own LIMIT (one more, to tell whether more follow) and the OFFSET", async () => {
  expect(await print('SELECT uuid FROM events ORDER BY timestamp DESC')).toContain('ORDER BY `timestamp` DESC LIMIT 101)');
  expect(await print('SELECT uuid FROM events ORDER BY timestamp DESC LIMIT 10 OFFSET 30')).toContain('ORDER BY `timestamp` DESC LIMIT 40)');
});

test("the bound's statement has the page's conditions", async () => {
  const sql = await print("SELECT e.uuid FROM events AS e WHERE e.event = 'signup' AND distinct_id != 'x' ORDER BY e.timestamp DESC, uuid LIMIT 5");
  expect(sql).toContain("FROM events AS `e` WHERE `e`.team_id = 42 AND (`e`.`event` = 'signup') AND (`e`.`distinct_id` != 'x') ORDER BY `timestamp` DESC LIMIT 5)");
});

describe('pages whose order or conditions the bound cannot keep, or would cost more to test twice, are printed as written', () => {
  const unbounded: [rule: string, hogql: string][] = [
    ['oldest first', 'SELECT uuid FROM events ORDER BY timestamp ASC LIMIT 5'],
    ['ordered by another column first', 'SELECT uuid FROM events ORDER BY event, timestamp DESC LIMIT 5'],
    ['a select alias named timestamp', 'SELECT toStartOfDay(timestamp) AS timestamp FROM events ORDER BY timestamp DESC LIMIT 5'],
    ['aggregated', 'SELECT event, max(timestamp) AS t FROM events GROUP BY event ORDER BY t DESC LIMIT 5'],
    ['an aggregate without GROUP BY', 'SELECT count() FROM events ORDER BY timestamp DESC LIMIT 5'],
    ['DISTINCT', 'SELECT DISTINCT event, timestamp FROM events ORDER BY timestamp DESC LIMIT 5'],
    ['LIMIT BY', 'SELECT event FROM events ORDER BY timestamp DESC LIMIT 1 BY event'],
    ['a condition on a select alias', "SELECT event AS name FROM events WHERE name = 'x' ORDER BY timestamp DESC LIMIT 5"],
    ['a condition on a JSON property', "SELECT uuid FROM events WHERE properties.$browser = 'Chrome' ORDER BY timestamp DESC LIMIT 5"],
    ['a condition through the person join', "SELECT uuid FROM events WHERE person.properties.plan = 'pro' ORDER BY timestamp DESC LIMIT 5"],
    ['a condition with a subquery', 'SELECT uuid FROM events WHERE distinct_id IN (SELECT distinct_id FROM person_distinct_ids) ORDER BY timestamp DESC LIMIT 5'],
    ['a join', 'SELECT e.uuid FROM events AS e JOIN persons AS p ON e.person_id = p.id ORDER BY e.timestamp DESC LIMIT 5'],
    ['a subquery for a table', 'SELECT uuid FROM (SELECT uuid, timestamp FROM events) ORDER BY timestamp DESC LIMIT 5'],
  ];
  it.each(unbounded)('%s', async (_rule, hogql) => {
    expect(await print(hogql)).not.toContain('PREWHERE');
  });
});
