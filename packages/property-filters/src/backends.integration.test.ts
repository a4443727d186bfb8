import { createPool, type Pool } from '@tributary/postgres';
import { testConfig } from '@tributary/test-support';
import { CASE_FILTERS, CASE_PROPERTIES, CASES_NOW } from './property-filter-cases.js';
import { matchProperty } from './match-property.js';
import { postgresPropertyCondition } from './postgres-property-condition.js';
import { propertyFilterProblem } from './property-filter-problem.js';
import { VALUE_OPERATORS } from './property-filter.js';

/**
 * Flags match in memory, the persons API filters in Postgres (and the events readers in ClickHouse,
 * through HogQL: `packages/hogql/src/property-filter-expr.integration.test.ts`): the same filter must
 * give the same answer everywhere. Each case runs in a real query; the matcher's answer is the expected one.
 */
let pool: Pool;

beforeAll(() => {
  pool = createPool(testConfig(), { max: 1 });
});

afterAll(() => pool.end());

const label = (filter: (typeof CASE_FILTERS)[number]) => `${filter.key} ${filter.operator ?? 'exact'} ${JSON.stringify(filter.value)}`;

async function inPostgres(properties: Record<string, unknown>): Promise<boolean[]> {
  const params: unknown[] = [JSON.stringify(properties)];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const columns = CASE_FILTERS.map((filter, i) => `COALESCE(${postgresPropertyCondition('p.properties', filter, param, CASES_NOW)}, false) AS c${i}`);
  const { rows } = await pool.query<Record<string, boolean>>(`SELECT ${columns.join(', ')} FROM (SELECT $1::jsonb AS properties) p`, params);
  return CASE_FILTERS.map((_, i) => rows[0]![`c${i}`] === true);
}

describe('the table of cases', () => {
  it('holds only filters the validator accepts, and covers every value operator with both answers', () => {
    expect(CASE_FILTERS.map((filter, i) => propertyFilterProblem(filter, `cases[${i}]`, { types: ['person'], now: CASES_NOW })).filter(Boolean)).toEqual([]);
    for (const operator of VALUE_OPERATORS) {
      const answers = CASE_FILTERS.filter((f) => (f.operator ?? 'exact') === operator).map((f) => matchProperty(f, CASE_PROPERTIES.person!, CASES_NOW));
      expect([operator, answers.includes(true), answers.includes(false)]).toEqual([operator, true, true]);
    }
  });
});

describe.each(Object.entries(CASE_PROPERTIES))('every backend answers as the matcher does, for %s', (_name, properties) => {
  const expected = () => Object.fromEntries(CASE_FILTERS.map((filter) => [label(filter), matchProperty(filter, properties, CASES_NOW)]));
  const answers = (results: boolean[]) => Object.fromEntries(CASE_FILTERS.map((filter, i) => [label(filter), results[i]]));

  it('Postgres', async () => {
    expect(answers(await inPostgres(properties))).toEqual(expected());
  });
});
