import type { Field } from './ast.js';
import { loadHogQLParser, parseExpr } from './parse.js';
import { isPersonSetCondition } from './person-condition.js';

/**
 * Which conditions may be read as a set of distinct ids by person: those reading only person
 * properties that no event without a person (every property NULL) can meet, as ClickHouse
 * evaluates them. Here a field is a person property when it starts with `person`.
 */
const readsPerson = (field: Field) => field.chain[0] === 'person';
const judged = async (condition: string) => isPersonSetCondition(await parseExpr(condition), readsPerson);

beforeAll(async () => {
  await loadHogQLParser();
});

describe('isPersonSetCondition', () => {
  it.each([
    "person.properties.plan = 'pro'",
    "person.properties.plan != 'pro'",
    'person.properties.seats > 3',
    "lower(person.properties.email) LIKE '%@example.com'",
    "person.properties.email ILIKE '%@EXAMPLE.com'",
    "person.properties.plan =~ '^p'",
    "NOT (person.properties.plan = 'pro')",
    "person.properties.plan IN ('pro', 'team')",
    "person.properties.plan NOT IN ('pro', 'team')",
    "NOT (person.properties.plan IN ('pro'))",
    "person.properties.plan = 'pro' AND person.properties.seats > 3",
    "person.properties.plan = 'pro' OR person.properties.seats > 3",
    "person.properties.plan = 'pro' AND 1 = 1",
    "ifNull(person.properties.plan = 'pro', 0)",
    "coalesce(person.properties.plan, person.properties.tier) = 'pro'",
    'person.properties.plan != NULL',
    'toFloat(person.properties.seats) + 1 > 3',
    "person.properties.a.b = 'c'",
  ])('takes %s: an event without a person cannot meet it', async (condition) => {
    expect(await judged(condition)).toBe(true);
  });

  it.each([
    ["person.properties.plan = 'pro' OR event = 'x'", 'it reads an event column'],
    ['person.properties.plan = NULL', 'isNull holds for a missing person'],
    ["ifNull(person.properties.plan, 'free') = 'free'", 'the default stands in for a missing person'],
    ["coalesce(person.properties.plan, 'free') = 'free'", 'the default stands in for a missing person'],
    ["NOT (ifNull(person.properties.plan = 'pro', 0))", 'NOT of a known false holds'],
    ["if(person.properties.plan = 'pro', 0, 1)", 'if gives its else branch for NULL'],
    ["has(['pro'], person.properties.plan) = 0", 'has is not known to give NULL'],
    ["isNull(person.properties.plan) OR person.properties.plan = 'pro'", 'isNull holds for a missing person'],
    ["person.properties.plan = 'pro' OR 1 = 1", 'a constant side may hold'],
    ['1 = 1', 'it reads no person property'],
  ])('leaves %s on the join: %s', async (condition) => {
    expect(await judged(condition)).toBe(false);
  });
});
