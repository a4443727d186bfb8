import { createClickHouse, Sql, type ClickHouse } from '@tributary/clickhouse';
import { matchProperty } from '@tributary/property-filters';
import { CASE_FILTERS, CASE_PROPERTIES, CASES_NOW } from '@tributary/property-filters/cases';
import { testConfig } from '@tributary/test-support';
import { jsonPropertyExpr, printQuery, type Expr, type SelectQuery } from './index.js';

/**
 * The events readers' filters, HogQL printed for ClickHouse, answer as the flag matcher does: each
 * case of `@tributary/property-filters`' table runs in one real query over a properties column.
 */
let clickhouse: ClickHouse;
beforeAll(() => {
  clickhouse = createClickHouse(testConfig());
});
afterAll(() => clickhouse.close());

const label = (filter: (typeof CASE_FILTERS)[number]) => `${filter.key} ${filter.operator ?? 'exact'} ${JSON.stringify(filter.value)}`;

async function inClickHouse(properties: Record<string, unknown>): Promise<boolean[]> {
  const column: Expr = { node: 'Field', chain: ['properties'] };
  const zero = { node: 'Constant', value: 0 } as const;
  const query: SelectQuery = {
    node: 'SelectQuery',
    select: CASE_FILTERS.map((filter, i) => ({ node: 'Alias', alias: `c${i}`, expr: { node: 'Call', name: 'ifNull', args: [jsonPropertyExpr(column, filter, CASES_NOW), zero] } })),
    select_from: { node: 'JoinExpr', table: { node: 'SelectQuery', select: [{ node: 'Alias', alias: 'properties', expr: { node: 'Constant', value: JSON.stringify(properties) } }] } },
  };
  const [row] = await clickhouse.query<Record<string, number | string>>(Sql.trusted(printQuery(query, { teamId: 1 }).clickhouse));
  return CASE_FILTERS.map((_, i) => Number(row![`c${i}`]) === 1);
}

describe.each(Object.entries(CASE_PROPERTIES))('property filters as HogQL answer as the matcher does, for %s', (_name, properties) => {
  it('in ClickHouse', async () => {
    const answers = await inClickHouse(properties);
    expect(Object.fromEntries(CASE_FILTERS.map((filter, i) => [label(filter), answers[i]]))).toEqual(Object.fromEntries(CASE_FILTERS.map((filter) => [label(filter), matchProperty(filter, properties, CASES_NOW)])));
  });
});
