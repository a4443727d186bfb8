import { materializedColumnName, type MaterializedColumns } from '@tributary/clickhouse';
import { HogQLError, jsonPropertyExpr, loadHogQLParser, parseSelect, printQuery, type SelectQuery } from './index.js';

/**
 * The printer reads a materialized property's column wherever it read the property from the JSON,
 * and what each query reads is reported for the use counts. That the answers are the same is
 * `materialized-columns.integration.test.ts` and `-chdb.test.ts`, on rows.
 */
const BROWSER = materializedColumnName('properties', '$browser');
const PLAN = materializedColumnName('person_properties', 'plan');
const materialized: MaterializedColumns = { properties: new Map([['$browser', BROWSER]]), person_properties: new Map([['plan', PLAN]]) };
const print = async (text: string) => printQuery(await parseSelect(text), { teamId: 42, materialized });

beforeAll(async () => {
  await loadHogQLParser();
});

describe('a materialized property is read from its column', () => {
  it('properties.$browser and properties[...] read the column, unquoted as from the JSON', async () => {
    for (const text of ['SELECT properties.$browser FROM events', "SELECT properties['$browser'] FROM events"]) {
      const { clickhouse } = await print(text);
      expect(clickhouse).toContain(`nullIf(nullIf(if(substring(\`events\`.\`${BROWSER}\`, 1, 1) = '"', visitParamExtractString(concat('{"v":', \`events\`.\`${BROWSER}\`, '}'), 'v'), \`events\`.\`${BROWSER}\`), ''), 'null')`);
      expect(clickhouse).not.toContain('`events`.`properties`');
    }
  });

  it('a nested key reads its first level from the column', async () => {
    const { clickhouse } = await print('SELECT properties.$browser.name FROM events');
    expect(clickhouse).toContain(`visitParamExtractRaw(\`events\`.\`${BROWSER}\`, 'name')`);
  });

  it("a property filter's raw value and presence test read the column", async () => {
    const filter = jsonPropertyExpr({ node: 'Field', chain: ['properties'] }, { key: '$browser', operator: 'gt', value: 5, type: 'event' }, new Date());
    const query: SelectQuery = { node: 'SelectQuery', select: [{ node: 'Constant', value: 1 }], select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } }, where: filter };
    const { clickhouse } = printQuery(query, { teamId: 42, materialized });
    expect(clickhouse).toContain(`(\`events\`.\`${BROWSER}\` != '')`);
    expect(clickhouse).not.toContain('`events`.`properties`');
  });

  it("poe.properties reads the person property's column; the current person's (a join of persons) does not", async () => {
    expect((await print('SELECT poe.properties.plan FROM events')).clickhouse).toContain(`\`events\`.\`${PLAN}\``);
    expect((await print('SELECT person.properties.plan FROM events')).clickhouse).not.toContain(PLAN);
  });

  it('a property without a column, and a JSON column not of events, are read from the JSON', async () => {
    expect((await print('SELECT properties.$os FROM events')).clickhouse).toContain("visitParamExtractRaw(`events`.`properties`, '$os')");
    expect((await print('SELECT properties.$browser FROM groups')).clickhouse).toContain("visitParamExtractRaw(`groups`.`properties`, '$browser')");
  });

  it('events printed as a guarded subquery carry the columns read through them', async () => {
    const { clickhouse } = await print('SELECT e.properties.$browser FROM events AS e JOIN person_distinct_ids AS d ON e.distinct_id = d.distinct_id');
    expect(clickhouse).toContain(`__e.\`${BROWSER}\` AS \`${BROWSER}\``);
    expect(clickhouse).toContain(`\`e\`.\`${BROWSER}\``);
  });

  it('events printed as a guarded subquery carry the columns its join constraint reads', async () => {
    const { clickhouse } = await print('SELECT d.person_id FROM events AS e JOIN person_distinct_ids AS d ON e.properties.$browser = d.distinct_id');
    expect(clickhouse).toContain(`__e.\`${BROWSER}\` AS \`${BROWSER}\``);
  });

  it("an alias named as a materialized column is refused: 18.16 would read it in the column's place", async () => {
    await expect(print(`SELECT 'x' AS ${BROWSER} FROM events WHERE properties.$browser = 'Chrome'`)).rejects.toThrow(HogQLError);
  });
});

describe('the properties a query reads are reported once each', () => {
  it('event and person-on-event properties, in any form, not persons or groups', async () => {
    const { propertyReads } = await print("SELECT properties.$browser, properties.$os.version, poe.properties.plan, person.properties.email FROM events WHERE properties['$browser'] = 'x' AND visitParamHas(properties, 'utm')");
    expect(propertyReads).toEqual(
      expect.arrayContaining([
        { column: 'properties', key: '$browser' },
        { column: 'properties', key: '$os' },
        { column: 'person_properties', key: 'plan' },
        { column: 'properties', key: 'utm' },
      ]),
    );
    expect(propertyReads).toHaveLength(4);
  });
});
