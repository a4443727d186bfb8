import { MAX_JSON_DEPTH, jsonProblem } from './json-problem.js';
import { PAGE_SCHEMA, validate, validateJsonParam } from './request-validation.js';

const nested = (depth: number): unknown => JSON.parse(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

describe('JSON a request may carry', () => {
  it('nests at most 128 levels, checked without recursion even a million levels deep', () => {
    expect(jsonProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonProblem(nested(MAX_JSON_DEPTH + 1))).toEqual({ attr: `${'a.'.repeat(MAX_JSON_DEPTH - 1)}a`, detail: expect.stringContaining('nests deeper than 128 levels') });
    expect(jsonProblem(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`))?.detail).toMatch(/nests deeper/);
  });

  it('when it is to be stored, holds no U+0000 and no unpaired surrogate, in values or keys, and names where', () => {
    const body = { name: 'ok 😀', filters: { groups: [{ key: 'a\u0000b' }] } };
    expect(jsonProblem(body)).toBeNull();
    expect(jsonProblem(body, { storable: true })).toEqual({ attr: 'filters.groups[0].key', detail: expect.stringContaining('U+0000') });
    expect(jsonProblem({ tags: ['x', '\ud800'] }, { storable: true })?.attr).toBe('tags[1]');
    expect(jsonProblem({ properties: { '\udfff': 1 } }, { storable: true })?.attr).toBe('properties.\udfff');
    expect(jsonProblem({ search: 'a\u0000' }, { storable: true })?.attr).toBe('search');
  });
});

describe('a query parameter holding JSON', () => {
  it('holds no U+0000 or unpaired surrogate written as a JSON escape, which the raw query string check cannot see (Postgres refused it, a 500)', () => {
    const schema = { type: 'array' };
    expect(validateJsonParam(schema, '[{"key":"a","value":"x"}]', 'properties')).toEqual([{ key: 'a', value: 'x' }]);
    expect(() => validateJsonParam(schema, '[{"key":"a","value":"\\u0000"}]', 'properties')).toThrow(expect.objectContaining({ status: 400, attr: 'properties[0].value', detail: expect.stringContaining('U+0000') }));
    expect(() => validateJsonParam(schema, '["\\ud800"]', 'distinct_ids')).toThrow(expect.objectContaining({ status: 400, attr: 'distinct_ids[0]' }));
  });
});

describe('a page of a list', () => {
  it('refuses an offset past what the database can count, instead of failing there', () => {
    expect(validate(PAGE_SCHEMA, { offset: 2_147_483_647 })).toMatchObject({ offset: 2_147_483_647 });
    expect(() => validate(PAGE_SCHEMA, { offset: 1e20 })).toThrow(expect.objectContaining({ status: 400, attr: 'offset' }));
  });
});
