import { bodySchemas, validate } from './request-validation.js';

const { create, patch } = bodySchemas(
  { name: { type: 'string', minLength: 1, maxLength: 5 }, active: { type: 'boolean' } },
  { required: ['name'], defaults: { active: true }, createOnly: { flag_id: { type: 'integer' } }, patchOnly: { deleted: { type: 'boolean' } } },
);

describe('bodySchemas: create and patch from one field list', () => {
  it('holds a field’s limits for both bodies', () => {
    expect(() => validate(create, { name: 'too long' })).toThrow(/name/);
    expect(() => validate(patch, { name: 'too long' })).toThrow(/name/);
  });

  it('requires and fills in only on create; a patch takes any field and fills in none', () => {
    expect(() => validate(create, {})).toThrow(/name/);
    expect(validate(create, { name: 'a' })).toEqual({ name: 'a', active: true });
    expect(validate(patch, {})).toEqual({});
  });

  it('keeps create-only and patch-only fields to their own body', () => {
    expect(create).toMatchObject({ properties: { flag_id: { type: 'integer' } } });
    expect(create).not.toMatchObject({ properties: { deleted: expect.anything() } });
    expect(patch).toMatchObject({ properties: { deleted: { type: 'boolean' } } });
    expect(patch).not.toMatchObject({ properties: { flag_id: expect.anything() } });
  });
});
