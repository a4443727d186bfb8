import { MARKER, PERSON, foreignValuesIn, unguardedReads, type HogQLRunner } from './two-team-fixture.js';

/**
 * HogQL queries and the exact rows ClickHouse returns for them (18.16 and 26 alike: `query-conformance*.test.ts` run them on both) on the two-project
 * fixture (`test/two-team-fixture.ts`: its table of the project's events and identities is the
 * key to every expected row). Each runs for `TEAM`; the other project shares distinct ids, a
 * group key and a person id with it at higher versions, so a missing guard changes these answers,
 * and none of its marker values may appear in any of them.
 */
export const values = { ev: '$pageview', ids: ['alice', 'bob'], n: 2, alice: PERSON.alice };
const { alice, bob, carol, anon } = PERSON;

export type Case = [rule: string, hogql: string, rows: unknown[][]];

const counting: Case[] = [
  ["counts the project's events only", 'SELECT count() FROM events', [[8]]],
  ['counts by event', 'SELECT event, count() FROM events GROUP BY event ORDER BY event', [['$pageview', 6], ['purchase', 1], ['signup', 1]]],
  ['orders by an aggregate alias', 'SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id ORDER BY c DESC, distinct_id', [['alice', 3], ['alice-phone', 1], ['anon', 1], ['bob', 1], ['bob-laptop', 1], ['carol', 1]]],
  ['count(*) with a condition', "SELECT count(*) FROM events WHERE event = '$pageview'", [[6]]],
  ['groups by day', 'SELECT toDate(timestamp) AS day, count() FROM events GROUP BY day ORDER BY day', [['2024-01-01', 3], ['2024-01-02', 3], ['2024-01-03', 2]]],
  ["another project's distinct id finds nothing", `SELECT count() FROM events WHERE distinct_id = '${MARKER}'`, [[0]]],
];

const properties: Case[] = [
  ['properties.$browser is text, NULL where absent', 'SELECT properties.$browser AS browser, count() AS c FROM events GROUP BY browser ORDER BY c DESC, browser', [['Chrome', 3], ['Firefox', 2], ['Edge', 1], ['Safari', 1], [null, 1]]],
  ['a nested property reads each level', 'SELECT properties.a.b FROM events WHERE properties.a.b IS NOT NULL', [['deep']]],
  ['a JSON array property is its JSON text', "SELECT properties.tags FROM events WHERE distinct_id = 'alice' ORDER BY timestamp LIMIT 1", [['["x","y"]']]],
  ['$session_id is a field of its own', 'SELECT $session_id, count() FROM events WHERE $session_id IS NOT NULL GROUP BY $session_id', [['s1', 2]]],
  ['IS NULL finds an absent property', 'SELECT count() FROM events WHERE properties.$browser IS NULL', [[1]]],
  ['a property compared with true', 'SELECT distinct_id FROM events WHERE properties.paid = true ORDER BY timestamp', [['alice'], ['alice'], ['bob-laptop']]],
  ['a property compared with false', 'SELECT distinct_id FROM events WHERE properties.paid = false', [['alice']]],
  ['a boolean property groups as its JSON text', 'SELECT properties.paid, count() FROM events GROUP BY properties.paid ORDER BY properties.paid', [['false', 1], ['true', 3], [null, 4]]],
  ['a property compared with a number is read as one', 'SELECT distinct_id, properties.amount FROM events WHERE properties.amount > 10 ORDER BY timestamp', [['alice', '15'], ['alice-phone', '20'], ['alice', '100'], ['bob-laptop', '50']]],
  ['a number stored as text equals the number', 'SELECT distinct_id FROM events WHERE properties.amount = 7', [['bob']]],
  ['toFloat of a property sums', 'SELECT sum(toFloat(properties.amount)) FROM events', [[197]]],
  ['bit functions of a number', 'SELECT bitAnd(12, 10), bitOr(12, 10), bitXor(12, 10), bitShiftLeft(1, 4), bitShiftRight(16, 2), bitTest(12, 2), bitNot(1) FROM events LIMIT 1', [[8, 14, 6, 16, 4, 1, 254]]],
];

const persons: Case[] = [
  ['person.properties.email through the lazy join: merged ids, a remapped id, a deleted and a personless one', 'SELECT distinct_id, person.properties.email FROM events ORDER BY timestamp', [
    ['alice', 'alice@example.com'], ['alice', 'alice@example.com'], ['bob', 'bob@example.com'], ['alice-phone', 'alice@example.com'],
    ['alice', 'alice@example.com'], ['carol', null], ['bob-laptop', 'alice@example.com'], ['anon', null],
  ]],
  ['groups by a person property', 'SELECT person.properties.email AS email, count() FROM events GROUP BY email ORDER BY email', [['alice@example.com', 5], ['bob@example.com', 1], [null, 2]]],
  ["a person's latest version is read", "SELECT DISTINCT person.properties.plan FROM events WHERE distinct_id = 'alice-phone'", [['pro']]],
  ['a deleted person has no properties', "SELECT person.properties.email FROM events WHERE distinct_id = 'carol'", [[null]]],
  ['person.created_at and person.is_identified', "SELECT person.created_at, person.is_identified FROM events WHERE distinct_id = 'bob'", [['2024-01-01 00:00:00', 0]]],
  ['the lazy join through a table alias', "SELECT e.distinct_id, e.person.properties.email FROM events AS e WHERE e.event = 'signup'", [['alice', 'alice@example.com']]],
  ['a person property in WHERE', "SELECT count() FROM events WHERE person.properties.email LIKE '%@example.com'", [[6]]],
  ['a numeric person property compared with a number', 'SELECT count() FROM events WHERE person.properties.age > 26', [[5]]],
  // A WHERE condition no event without a person can meet is read as a set of distinct ids; countIf reads the same condition through the join.
  ['a person condition read as a set of ids counts what the join counts', "SELECT count(), countIf(person.properties.plan = 'pro') FROM events WHERE person.properties.plan = 'pro'", [[5, 5]]],
  ['!= leaves out the deleted person and the personless event, as the join does', "SELECT count(), countIf(person.properties.plan != 'pro') FROM events WHERE person.properties.plan != 'pro'", [[1, 1]]],
  ['a set of ids beside an event condition, through merged and remapped ids', "SELECT distinct_id FROM events WHERE person.properties.age > 26 AND event != 'signup' ORDER BY timestamp", [['alice'], ['alice'], ['alice-phone'], ['bob-laptop']]],
  ['a person set whose condition holds a subquery with a person set of its own', "SELECT count() FROM events WHERE person.properties.email IN (SELECT person.properties.email FROM events WHERE person.properties.age > 26)", [[5]]],
  ['two person conditions in OR are one set', "SELECT count() FROM events WHERE person.properties.plan = 'free' OR person.properties.age > 26", [[6]]],
  ['NOT IN a set is NULL for a missing person (and a deleted one), as on current releases', "SELECT count() FROM events WHERE person.properties.plan NOT IN ('pro')", [[1]]],
  ['IS NULL holds for a missing person: it stays on the join', 'SELECT count() FROM events WHERE person.properties.plan IS NULL', [[2]]],
  ['a default for a missing property holds for a missing person: it stays on the join', "SELECT count() FROM events WHERE ifNull(person.properties.plan, 'none') = 'none'", [[2]]],
  ['pdi.person_id is the current person of each distinct id', "SELECT distinct_id, pdi.person_id FROM events WHERE distinct_id IN ('alice', 'alice-phone', 'bob-laptop') ORDER BY timestamp", [['alice', alice], ['alice', alice], ['alice-phone', alice], ['alice', alice], ['bob-laptop', alice]]],
  ['person_id: remapped, deleted person, and the stored person of a personless event', "SELECT distinct_id, person_id FROM events WHERE distinct_id IN ('bob', 'bob-laptop', 'anon', 'carol') ORDER BY timestamp", [['bob', bob], ['carol', carol], ['bob-laptop', alice], ['anon', anon]]],
  ['groups by person_id', 'SELECT person_id, count() FROM events GROUP BY person_id HAVING count() > 1', [[alice, 5]]],
  ['counts distinct persons', 'SELECT count(DISTINCT person_id) FROM events', [[4]]],
  ['pdi.distinct_id is the event distinct id', "SELECT pdi.distinct_id FROM events WHERE event = 'purchase'", [['bob-laptop']]],
];

const tables: Case[] = [
  ['persons: latest versions, the deleted one left out', 'SELECT id, properties.email FROM persons ORDER BY properties.email', [[alice, 'alice@example.com'], [bob, 'bob@example.com']]],
  ['persons by is_identified', 'SELECT count() FROM persons WHERE is_identified = 1', [[1]]],
  ['a person by id', 'SELECT properties.plan FROM persons WHERE id = {alice}', [['pro']]],
  ['person_distinct_ids: the latest mapping of each id', 'SELECT distinct_id, person_id FROM person_distinct_ids ORDER BY distinct_id', [['alice', alice], ['alice-phone', alice], ['bob', bob], ['bob-laptop', alice], ['carol', carol]]],
  ['person_distinct_ids grouped by person', 'SELECT person_id, count() AS ids FROM person_distinct_ids GROUP BY person_id ORDER BY ids DESC LIMIT 1', [[alice, 3]]],
  ['groups: the latest version of each', 'SELECT index, key, properties.name FROM groups ORDER BY index, key', [[0, 'acme', 'Acme Inc'], [0, 'globex', 'Globex'], [1, 'proj-1', 'Project One']]],
  ['groups by a property', "SELECT key FROM groups WHERE properties.industry = 'tech'", [['acme']]],
];

const joins: Case[] = [
  ['person_distinct_ids JOIN persons', 'SELECT d.distinct_id, p.properties.email FROM person_distinct_ids AS d JOIN persons AS p ON d.person_id = p.id ORDER BY d.distinct_id', [['alice', 'alice@example.com'], ['alice-phone', 'alice@example.com'], ['bob', 'bob@example.com'], ['bob-laptop', 'alice@example.com']]],
  ['events LEFT JOIN person_distinct_ids', "SELECT e.distinct_id, d.person_id FROM events AS e LEFT JOIN person_distinct_ids AS d ON e.distinct_id = d.distinct_id WHERE e.event = 'purchase'", [['bob-laptop', alice]]],
  ['events JOIN groups', 'SELECT e.event, g.properties.name FROM events AS e JOIN groups AS g ON e.$group_0 = g.key WHERE g.index = 0 ORDER BY e.timestamp', [['$pageview', 'Acme Inc'], ['$pageview', 'Acme Inc'], ['$pageview', 'Globex'], ['$pageview', 'Acme Inc'], ['signup', 'Acme Inc'], ['purchase', 'Globex']]],
  ["the right-hand key of an inner join (18.16 misreads a bare one; the printer compares it as an expression)", 'SELECT e.distinct_id, g.key FROM events AS e JOIN groups AS g ON e.$group_0 = g.key ORDER BY e.timestamp', [['alice', 'acme'], ['alice', 'acme'], ['bob', 'globex'], ['alice-phone', 'acme'], ['alice', 'acme'], ['bob-laptop', 'globex']]],
  ['a self-join of events', "SELECT f.event AS other, count() FROM events AS e JOIN events AS f ON e.distinct_id = f.distinct_id WHERE e.event = 'signup' GROUP BY other ORDER BY other", [['$pageview', 2], ['signup', 1]]],
  ['JOIN ... USING', "SELECT e.event, d.person_id FROM events AS e JOIN person_distinct_ids AS d USING distinct_id WHERE e.event = 'purchase'", [['purchase', alice]]],
  ['RIGHT JOIN', 'SELECT d.distinct_id, p.properties.email FROM person_distinct_ids AS d RIGHT JOIN persons AS p ON d.person_id = p.id ORDER BY d.distinct_id', [['alice', 'alice@example.com'], ['alice-phone', 'alice@example.com'], ['bob', 'bob@example.com'], ['bob-laptop', 'alice@example.com']]],
  ['events JOIN groups, grouped', 'SELECT g.properties.name AS name, count() FROM events AS e JOIN groups AS g ON e.$group_0 = g.key GROUP BY name ORDER BY name', [['Acme Inc', 4], ['Globex', 2]]],
];

const subqueries: Case[] = [
  ['a subquery in FROM', 'SELECT event, c FROM (SELECT event, count() AS c FROM events GROUP BY event) ORDER BY c DESC, event', [['$pageview', 6], ['purchase', 1], ['signup', 1]]],
  ['an aggregate over a subquery', 'SELECT max(c) FROM (SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id)', [[3]]],
  ['a subquery after IN', 'SELECT distinct_id FROM events WHERE distinct_id IN (SELECT distinct_id FROM person_distinct_ids WHERE person_id = {alice}) ORDER BY timestamp', [['alice'], ['alice'], ['alice-phone'], ['alice'], ['bob-laptop']]],
  ['a subquery after NOT IN', 'SELECT count() FROM events WHERE distinct_id NOT IN (SELECT distinct_id FROM person_distinct_ids)', [[1]]],
  ['a missing property is neither IN a set nor NOT IN it (NULL), on 18.16 as on current releases', "SELECT count(), countIf(properties.$browser IN ('Chrome')), countIf(properties.$browser NOT IN ('Chrome')), countIf(NOT (properties.$browser IN ('Chrome'))) FROM events", [[8, 3, 4, 4]]],
  ['person_id in an IN subquery', "SELECT properties.email FROM persons WHERE id IN (SELECT person_id FROM events WHERE event = 'purchase')", [['alice@example.com']]],
  ['a subquery CTE', "WITH pv AS (SELECT distinct_id FROM events WHERE event = '$pageview') SELECT distinct_id, count() FROM pv GROUP BY distinct_id ORDER BY distinct_id", [['alice', 2], ['alice-phone', 1], ['anon', 1], ['bob', 1], ['carol', 1]]],
  ['an expression CTE', 'WITH 10 AS threshold SELECT count() FROM events WHERE toFloat(properties.amount) > threshold', [[4]]],
  ['a CTE read in an IN subquery', "WITH buyers AS (SELECT distinct_id FROM events WHERE event = 'purchase') SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM buyers)", [[1]]],
  ['UNION ALL of two tables', "SELECT x FROM (SELECT event AS x FROM events WHERE event = 'signup' UNION ALL SELECT key AS x FROM groups) ORDER BY x", [['acme'], ['globex'], ['proj-1'], ['signup']]],
  ['UNION ALL counted', 'SELECT count() FROM (SELECT distinct_id FROM events UNION ALL SELECT distinct_id FROM person_distinct_ids)', [[13]]],
];

const expressions: Case[] = [
  ['arrayJoin multiplies rows', "SELECT arrayJoin(['a', 'b']) AS x, count() FROM events GROUP BY x ORDER BY x", [['a', 8], ['b', 8]]],
  ['arrayMap with a lambda', 'SELECT arrayMap(x -> x * 2, [1, 2, 3])', [[[2, 4, 6]]]],
  ['arrayFilter with a lambda', 'SELECT arrayFilter(x -> x > 1, [1, 2, 3])', [[[2, 3]]]],
  ['arraySort of groupUniqArray', "SELECT arraySort(groupUniqArray(distinct_id)) FROM events WHERE event = '$pageview'", [[['alice', 'alice-phone', 'anon', 'bob', 'carol']]]],
  ['an ARRAY JOIN alias in SELECT and WHERE', "SELECT distinct_id, x FROM events ARRAY JOIN [1, 2] AS x WHERE distinct_id = 'anon' AND x > 1", [['anon', 2]]],
  ['if', "SELECT if(event = 'signup', 'yes', 'no') AS s, count() FROM events GROUP BY s ORDER BY s", [['no', 7], ['yes', 1]]],
  ['multiIf', "SELECT multiIf(toFloat(properties.amount) >= 50, 'big', toFloat(properties.amount) >= 10, 'mid', 'small') AS size, count() FROM events GROUP BY size ORDER BY size", [['big', 2], ['mid', 2], ['small', 4]]],
  ['coalesce', "SELECT coalesce(properties.$browser, 'none') FROM events ORDER BY timestamp", [['Chrome'], ['Chrome'], ['Firefox'], ['Safari'], ['none'], ['Chrome'], ['Firefox'], ['Edge']]],
  ['toInt, toFloat, toDateTime, toDate; toInt of text that is no number is NULL', "SELECT toInt('42'), toFloat('1.5'), toInt('x'), toDateTime('2024-01-02 03:04:05'), toDate('2024-01-02')", [[42, 1.5, null, '2024-01-02 03:04:05', '2024-01-02']]],
  ['toInt of a property', "SELECT toInt(properties.amount) FROM events WHERE distinct_id = 'bob'", [[7]]],
  ['toStartOfDay', 'SELECT toStartOfDay(timestamp) AS day, count() FROM events GROUP BY day ORDER BY day', [['2024-01-01 00:00:00', 3], ['2024-01-02 00:00:00', 3], ['2024-01-03 00:00:00', 2]]],
  ['dateDiff in days', "SELECT dateDiff('day', min(timestamp), max(timestamp)) FROM events", [[2]]],
  ['dateDiff in hours from a toDateTime', "SELECT dateDiff('hour', toDateTime('2024-01-01 00:00:00'), min(timestamp)) FROM events", [[10]]],
  ['toIntervalDay subtracted from a time', "SELECT count() FROM events WHERE timestamp >= toDateTime('2024-01-03 00:00:00') - toIntervalDay(1)", [[5]]],
  ['toIntervalDay added to a day', "SELECT toStartOfDay(toDateTime('2024-01-02 15:30:00')) + toIntervalDay(1)", [['2024-01-03 00:00:00']]],
  ['formatDateTime', "SELECT formatDateTime(max(timestamp), '%Y-%m-%d %H') FROM events", [['2024-01-03 12']]],
  ['match', "SELECT distinct_id FROM events WHERE match(properties.$current_url, '/home$') ORDER BY timestamp", [['alice'], ['alice-phone']]],
  ['extract', "SELECT extract(properties.$current_url, 'item=(\\\\d+)') FROM events WHERE properties.$current_url LIKE '%item=%'", [['42']]],
  ['LIKE', "SELECT distinct_id FROM events WHERE distinct_id LIKE 'alice%' ORDER BY timestamp", [['alice'], ['alice'], ['alice-phone'], ['alice']]],
  ['ILIKE ignores case', "SELECT DISTINCT distinct_id FROM events WHERE distinct_id ILIKE 'ALICE%' ORDER BY distinct_id", [['alice'], ['alice-phone']]],
  ['=~ is a regular expression match', "SELECT DISTINCT distinct_id FROM events WHERE distinct_id =~ '^b' ORDER BY distinct_id", [['bob'], ['bob-laptop']]],
  ['domain of a URL property, its alias in WHERE', 'SELECT domain(properties.$current_url) AS d, count() FROM events WHERE d IS NOT NULL GROUP BY d ORDER BY d', [['example.com', 3], ['shop.example.org', 1]]],
  ['replaceAll', "SELECT replaceAll(distinct_id, '-', '_') AS d FROM events WHERE distinct_id LIKE '%-%' ORDER BY d", [['alice_phone'], ['bob_laptop']]],
  ['concat takes numbers as text', "SELECT concat(event, ':', toFloat(properties.amount)) FROM events WHERE event = 'purchase'", [['purchase:50']]],
];

const aggregates: Case[] = [
  ['quantile', 'SELECT quantile(0.5)(toFloat(properties.amount)) FROM events', [[17.5]]],
  ['quantiles', 'SELECT quantiles(0.25, 0.5)(toFloat(properties.amount)) FROM events', [[[9, 17.5]]]],
  ['uniq and uniqExact', 'SELECT uniq(distinct_id), uniqExact(person_id) FROM events', [[6, 4]]],
  ['countIf, sumIf, avgIf', "SELECT countIf(event = '$pageview'), sumIf(toFloat(properties.amount), event = 'signup'), avgIf(toFloat(properties.amount), properties.paid = true) FROM events", [[6, 100, 155 / 3]]],
  ['min and max of a time', 'SELECT min(timestamp), max(timestamp) FROM events', [['2024-01-01 10:00:00', '2024-01-03 12:00:00']]],
  ['argMax', "SELECT argMax(event, timestamp) FROM events WHERE distinct_id = 'alice'", [['signup']]],
  ['windowFunnel by person', "SELECT steps, count() FROM (SELECT person_id, windowFunnel(172800)(timestamp, event = '$pageview', event = 'signup') AS steps FROM events GROUP BY person_id) GROUP BY steps ORDER BY steps", [[1, 3], [2, 1]]],
];

const clauses: Case[] = [
  ['LIMIT BY keeps the first row of each', 'SELECT distinct_id, event FROM events ORDER BY timestamp LIMIT 1 BY distinct_id', [['alice', '$pageview'], ['bob', '$pageview'], ['alice-phone', '$pageview'], ['carol', '$pageview'], ['bob-laptop', 'purchase'], ['anon', '$pageview']]],
  ['DISTINCT', 'SELECT DISTINCT event FROM events ORDER BY event', [['$pageview'], ['purchase'], ['signup']]],
  ['HAVING', 'SELECT distinct_id, count() AS c FROM events GROUP BY distinct_id HAVING c > 1 ORDER BY c DESC', [['alice', 3]]],
  ['LIMIT and OFFSET', 'SELECT distinct_id FROM events ORDER BY timestamp LIMIT 2 OFFSET 1', [['alice'], ['bob']]],
  ['IN a list, and NOT', "SELECT count() FROM events WHERE event IN ('signup', 'purchase') AND NOT (properties.paid = false)", [[2]]],
  ['a placeholder value', 'SELECT count() FROM events WHERE event = {ev}', [[6]]],
  ['a list placeholder after IN, and a LIMIT placeholder', 'SELECT distinct_id FROM events WHERE distinct_id IN {ids} ORDER BY timestamp LIMIT {n}', [['alice'], ['alice']]],
];

// Pages newest first are read below the time of their last row (`newest-first.ts`); the other
// project's events are all newer, so a bound taken from its rows would leave these pages empty.
const newestFirst: Case[] = [
  ['the newest page', 'SELECT distinct_id, event FROM events ORDER BY timestamp DESC LIMIT 3', [['anon', '$pageview'], ['bob-laptop', 'purchase'], ['carol', '$pageview']]],
  ['the newest page after an offset', 'SELECT distinct_id FROM events ORDER BY timestamp DESC LIMIT 2 OFFSET 3', [['alice'], ['alice-phone']]],
  ['the newest page of one event, through a table alias', "SELECT e.distinct_id FROM events AS e WHERE e.event = '$pageview' ORDER BY e.timestamp DESC, e.distinct_id LIMIT 2", [['anon'], ['carol']]],
  ['a page longer than the rows there are', "SELECT distinct_id FROM events WHERE event = 'signup' ORDER BY timestamp DESC LIMIT 10", [['alice']]],
  ['a page with no rows', "SELECT distinct_id FROM events WHERE event = 'no such event' ORDER BY timestamp DESC LIMIT 10", []],
  ['a page filtered on a property', "SELECT distinct_id FROM events WHERE properties.$browser = 'Chrome' ORDER BY timestamp DESC LIMIT 2", [['carol'], ['alice']]],
  ['a page filtered on a select alias', "SELECT distinct_id, event AS name FROM events WHERE name = 'purchase' ORDER BY timestamp DESC LIMIT 2", [['bob-laptop', 'purchase']]],
];

export const cases = { counting, properties, persons, tables, joins, subqueries, expressions, aggregates, clauses, newestFirst };

/** Each case's rows, from the project's rows alone with every read guarded, on whichever engine `runner` gives. */
export function expectCorpusAnswers(runner: () => HogQLRunner): void {
  describe.each(Object.entries(cases))('%s', (_group, table) => {
    it.each(table)('%s', async (_rule, hogql, rows) => {
      const result = await runner().run(hogql, values);
      expect(result.rows).toEqual(rows);
      expect(foreignValuesIn(result.rows)).toEqual([]);
      expect(unguardedReads(result.sql)).toEqual([]);
    });
  });
}
