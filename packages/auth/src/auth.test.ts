import {
  digestsEqual,
  generatePersonalApiKey,
  generateProjectApiKey,
  hashPersonalApiKey,
  maskKey,
  missingScopes,
  isGrantedScope,
} from './index.js';

describe('API keys', () => {
  it('personal keys carry the phx_ prefix and project keys phc_, with 43 random characters', () => {
    expect(generatePersonalApiKey()).toMatch(/^phx_[A-Za-z0-9]{43}$/);
    expect(generateProjectApiKey()).toMatch(/^phc_[A-Za-z0-9]{43}$/);
  });

  it('never issues the same key twice in a row', () => {
    expect(generatePersonalApiKey()).not.toBe(generatePersonalApiKey());
  });

  it('hashes keys under the pepper, so the same key under another pepper does not match', () => {
    const key = generatePersonalApiKey();
    const digest = hashPersonalApiKey(key, 'pepper-one');
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digestsEqual(digest, hashPersonalApiKey(key, 'pepper-one'))).toBe(true);
    expect(digestsEqual(digest, hashPersonalApiKey(key, 'pepper-two'))).toBe(false);
  });

  it('compares digests of different lengths as unequal instead of throwing', () => {
    expect(digestsEqual('abcd', 'ab')).toBe(false);
  });

  it('masks a key to its prefix and last four characters', () => {
    expect(maskKey('phx_abcdefghijklmnop')).toBe('phx_ab...mnop');
  });
});

describe('scopes', () => {
  it('the wildcard grants everything', () => {
    expect(missingScopes(['*'], ['person:write', 'query:read'])).toEqual([]);
  });

  it('names every required scope the key lacks', () => {
    expect(missingScopes(['query:read'], ['person:read', 'cohort:read'])).toEqual(['person:read', 'cohort:read']);
  });

  it('a write scope implies the read scope of the same object, not the other way round', () => {
    expect(missingScopes(['person:write'], ['person:read'])).toEqual([]);
    expect(missingScopes(['person:read'], ['person:write'])).toEqual(['person:write']);
  });

  it('recognises only known scopes', () => {
    expect(isGrantedScope('feature_flag:write')).toBe(true);
    expect(isGrantedScope('everything')).toBe(false);
  });
});
