import { CompiledPropertyFilter } from './compile-property-filter.js';
import { matchProperty } from './match-property.js';
import { CASE_FILTERS, CASE_PROPERTIES, CASES_NOW } from './property-filter-cases.js';
import type { StoredPropertyFilter } from './property-filter.js';

const answer = (run: () => boolean) => {
  try {
    return run();
  } catch (error) {
    return String(error);
  }
};

/** Filters outside the backends' table: what stored definitions from before validation may hold. */
const STORED_ODDITIES: StoredPropertyFilter[] = [
  { key: 'plan', operator: 'regex', value: '(' },
  { key: 'plan', operator: 'not_regex', value: '(' },
  { key: 'missing', operator: 'not_regex', value: '(' },
  { key: 'plan', operator: 'exact' },
  { key: 'missing', operator: 'is_not', value: null },
  { key: 'plan', operator: 'exact', value: [] },
  { key: 'plan', operator: 'exact', value: [undefined, 'pro'] },
  { key: 'plan', operator: 'exact', value: ['x', undefined] },
  { key: 'plan', operator: 'bogus', value: 'pro' },
  { key: 'plan', operator: 'constructor', value: 'pro' },
  { key: 'missing', operator: 'in', value: 3 },
  { key: 'seats', operator: 'gt', value: [1] },
  { key: 'seats', operator: 'lt', value: { a: 1 } },
  { key: 'email', operator: 'icontains', value: ['acme'] },
  { key: 'constructor', operator: 'is_set' },
];

const PROPERTY_BAGS = {
  ...CASE_PROPERTIES,
  undefinedValues: { plan: undefined, seats: undefined },
  inherited: Object.create({ plan: 'pro' }) as Record<string, unknown>,
  unserialisable: { plan: () => 'pro', email: Symbol('x') },
};

describe('a compiled property filter', () => {
  const filters = [...CASE_FILTERS, ...STORED_ODDITIES];
  describe.each(Object.entries(PROPERTY_BAGS))('on %s', (_, properties) => {
    it.each(filters.map((filter) => [JSON.stringify(filter), filter] as const))('answers as matchProperty does: %s', (_, filter) => {
      const compiled = new CompiledPropertyFilter(filter);
      const expected = answer(() => matchProperty(filter, properties, CASES_NOW));
      expect(answer(() => compiled.matches(properties, CASES_NOW))).toEqual(expected);
      // Compiled once, matched many times: nothing of one match carries into the next.
      expect(answer(() => compiled.matches(properties, CASES_NOW))).toEqual(expected);
    });
  });

  it('reads relative dates against the clock of each match, not of its compilation', () => {
    const compiled = new CompiledPropertyFilter({ key: 'p', operator: 'is_date_after', value: '-7d' });
    expect(compiled.matches({ p: '2024-01-05T00:00:00Z' }, new Date('2024-01-10T00:00:00Z'))).toBe(true);
    expect(compiled.matches({ p: '2024-01-05T00:00:00Z' }, new Date('2024-02-10T00:00:00Z'))).toBe(false);
  });
});
