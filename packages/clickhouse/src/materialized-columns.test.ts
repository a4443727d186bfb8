import { quoteString } from './sql.js';
import { materializedColumnName, materializedColumnOf, materializedExpression } from './materialized-columns.js';

/** A column's expression as `system.columns` gives it back: the literal in ClickHouse's escaping, which `quoteString` writes too. */
const listed = (column: 'properties' | 'person_properties', key: string) => ({ name: materializedColumnName(column, key), default_expression: `visitParamExtractRaw(${column}, ${quoteString(key)})` });

describe('a materialized column is named safely from any key a tenant chose', () => {
  const hostile = ['$browser', '_browser', 'a`; DROP TABLE events; --', "it's", 'back\\slash', 'new\nline', 'ünïcødé 表', '', ' ', 'x'.repeat(10_000), 'team_id', '__pdi_person_id'];

  it.each(hostile)('%j gets a plain identifier, prefixed, of bounded length', (key) => {
    const name = materializedColumnName('properties', key);
    expect(name).toMatch(/^mat_[A-Za-z0-9_]{0,40}_[0-9a-f]{12}$/);
  });

  it('keys that read alike get different columns, and one key always the same one', () => {
    const names = hostile.map((key) => materializedColumnName('properties', key));
    expect(new Set(names).size).toBe(hostile.length);
    expect(materializedColumnName('properties', '$browser')).toBe(materializedColumnName('properties', '$browser'));
    expect(materializedColumnName('properties', '$browser')).toMatch(/^mat__browser_/);
  });

  it("a person property's column is apart from the event property's of the same key", () => {
    expect(materializedColumnName('person_properties', 'email')).toMatch(/^pmat_email_/);
    expect(materializedColumnName('person_properties', 'email').slice(1)).not.toBe(materializedColumnName('properties', 'email'));
  });

  it('the expression quotes the key as a string literal', () => {
    expect(materializedExpression('properties', "it's")).toBe("visitParamExtractRaw(properties, 'it\\'s')");
  });
});

describe('the columns system.columns lists are read back as the properties they materialize', () => {
  it.each(['$browser', "it's", 'back\\slash', 'new\nline\ttab', 'ünïcødé 表'])('%j', (key) => {
    expect(materializedColumnOf(listed('properties', key))).toEqual({ column: 'properties', key, name: materializedColumnName('properties', key) });
    expect(materializedColumnOf(listed('person_properties', key))?.column).toBe('person_properties');
  });

  it('a column under a name its key would not get is not taken for it (a column added by hand, a decoding slip)', () => {
    expect(materializedColumnOf({ name: 'mat_browser', default_expression: "visitParamExtractRaw(properties, '$browser')" })).toBeNull();
    expect(materializedColumnOf({ ...listed('properties', '$os'), name: materializedColumnName('properties', '$browser') })).toBeNull();
  });

  it('any other column is not a materialized property', () => {
    expect(materializedColumnOf({ name: 'inserted_at', default_expression: 'now()' })).toBeNull();
    expect(materializedColumnOf({ name: materializedColumnName('properties', 'a'), default_expression: "visitParamExtractString(properties, 'a')" })).toBeNull();
  });
});
