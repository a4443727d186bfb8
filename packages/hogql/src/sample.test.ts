import { loadHogQLParser, parseSelect, printHogQL, withSample } from './index.js';

/** An insight's `samplingFactor` samples the events it aggregates: every events read in a FROM clause, none in a condition. */
beforeAll(async () => {
  await loadHogQLParser();
});

const sampled = async (text: string) => printHogQL(withSample(await parseSelect(text), 0.1));

test('every events read in FROM, in subqueries, joins and union parts, is sampled', async () => {
  expect(await sampled('SELECT c FROM (SELECT count() AS c FROM events AS e JOIN (SELECT distinct_id FROM events) AS f ON e.distinct_id = f.distinct_id) UNION ALL SELECT count() FROM events')).toBe(
    'SELECT c FROM (SELECT count() AS c FROM events AS e SAMPLE 0.1 JOIN (SELECT distinct_id FROM events SAMPLE 0.1) AS f ON e.distinct_id = f.distinct_id) UNION ALL SELECT count() FROM events SAMPLE 0.1',
  );
});

test('a subquery in a condition decides who counts and is read whole; other tables are not sampled', async () => {
  expect(await sampled('SELECT count() FROM events WHERE person_id IN (SELECT person_id FROM events WHERE event = \'signup\')')).toContain('FROM events SAMPLE 0.1 WHERE');
  expect(await sampled('SELECT count() FROM events WHERE person_id IN (SELECT person_id FROM events WHERE event = \'signup\')')).toContain("(SELECT person_id FROM events WHERE");
  expect(await sampled('SELECT count() FROM persons')).toBe('SELECT count() FROM persons');
});

test('a SAMPLE the query has already is kept', async () => {
  expect(await sampled('SELECT count() FROM events SAMPLE 1/2 OFFSET 1/2')).toBe('SELECT count() FROM events SAMPLE 1/2 OFFSET 1/2');
});
