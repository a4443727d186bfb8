import { decide, mayReadInstance } from './authorization.js';

describe('decide: a key scope and an access level, both asked', () => {
  it('reading needs the read scope (or write, which implies it) and at least viewer', () => {
    expect(decide({ scopes: ['feature_flag:read'], object: 'feature_flag', need: 'read', level: 'viewer' })).toEqual({ allowed: true });
    expect(decide({ scopes: ['feature_flag:write'], object: 'feature_flag', need: 'read', level: 'editor' })).toEqual({ allowed: true });
    expect(decide({ scopes: ['early_access_feature:write'], object: 'feature_flag', need: 'read', level: 'editor' })).toEqual({ allowed: false, reason: 'missing_scope', scopes: ['feature_flag:read'] });
  });

  it('a member without access does not learn the object exists; a viewer may not write', () => {
    expect(decide({ scopes: ['*'], object: 'dashboard', need: 'read', level: 'none' })).toEqual({ allowed: false, reason: 'hidden' });
    expect(decide({ scopes: ['*'], object: 'dashboard', need: 'write', level: 'viewer' })).toEqual({ allowed: false, reason: 'view_only' });
    expect(decide({ scopes: ['*'], object: 'dashboard', need: 'write', level: 'editor' })).toEqual({ allowed: true });
  });

  it('the scope is checked before the level, so a narrow key learns nothing about access controls', () => {
    expect(decide({ scopes: ['survey:write'], object: 'feature_flag', need: 'write', level: 'none' })).toMatchObject({ reason: 'missing_scope' });
  });

  it('an object its parent covers skips the scope, never the access control', () => {
    expect(decide({ scopes: ['survey:write'], object: 'feature_flag', need: 'write', level: 'editor', coveredByParent: true })).toEqual({ allowed: true });
    expect(decide({ scopes: ['survey:write'], object: 'feature_flag', need: 'write', level: 'viewer', coveredByParent: true })).toEqual({ allowed: false, reason: 'view_only' });
  });
});

describe('mayReadInstance', () => {
  const unlimited = { scopes: ['*'], scoped_projects: null };
  it('needs an instance operator holding an unlimited key', () => {
    expect(mayReadInstance(unlimited, true)).toBe(true);
    expect(mayReadInstance(unlimited, false)).toBe(false);
    expect(mayReadInstance({ scopes: ['*'], scoped_projects: [1] }, true)).toBe(false);
    expect(mayReadInstance({ scopes: ['query:read'], scoped_projects: null }, true)).toBe(false);
  });
});
