import { cases, expectCorpusAnswers } from '../test/conformance-cases.js';
import { TEAM, createHogQLRunner, useTwoTeamFixture, type HogQLRunner } from '../test/two-team-fixture.js';

/** The HogQL conformance corpus (`test/conformance-cases.ts`) on the stack's ClickHouse 18.16; `query-conformance-chdb.test.ts` runs it on 26. */
const fixture = useTwoTeamFixture();
let runner: HogQLRunner;
/** The same printer taking events' stored persons, overridden for the ids that moved (bob-laptop's events still carry bob). */
let personsOnEvents: HogQLRunner;
beforeAll(() => {
  ({ runner } = fixture);
  personsOnEvents = createHogQLRunner(fixture.clickhouse, runner.server, TEAM, undefined, 'person_id_override_properties_joined');
});

describe('HogQL answers on the two-project fixture', () => {
  it(`has at least 60 cases`, () => {
    expect(Object.values(cases).flat().length).toBeGreaterThanOrEqual(60);
  });

  expectCorpusAnswers(() => runner);
});

describe('the same answers with persons on events (person_id_override_properties_joined)', () => {
  expectCorpusAnswers(() => personsOnEvents);
});

describe('column names that would hide stored columns on ClickHouse 18.16', () => {
  // A column's alias stands for that name everywhere in its SELECT on 18.16, qualified or not, so
  // the printer gives a column no name that hides another: a subquery names it apart and a select
  // around it gives the name back.
  it('an implicit column name does not hide a table column of the same name', async () => {
    expect((await runner.run("SELECT properties.event, distinct_id FROM events WHERE event = 'signup'")).rows).toEqual([[null, 'alice']]);
  });

  it("a subquery's person_id column is read by name from outside", async () => {
    const { rows } = await runner.run('SELECT person_id = p.id, n FROM (SELECT person_id, count() AS n FROM events GROUP BY person_id HAVING n > 1) AS s JOIN persons AS p ON s.person_id = p.id');
    expect(rows).toEqual([[1, 5]]);
  });
});
