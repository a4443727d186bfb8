import type { ProjectFlags } from './flag-definitions.js';
import { RememberedAnswers, mayRemember, type AnswerSources, type RememberedAnswer } from './remembered-answers.js';

const request = (overrides: Partial<Parameters<RememberedAnswers['keyOf']>[0]> = {}) => ({
  contentType: 'application/json',
  contentEncoding: undefined,
  data: '',
  compression: '',
  ip: '203.0.113.9',
  body: Buffer.from('{"token":"phc_x","distinct_id":"ann"}'),
  ...overrides,
});
const answer = (distinctId: string): RememberedAnswer => ({ token: 'phc_x', teamId: 1, distinctId, definitions: {} as ProjectFlags, personProperties: {}, results: [] });

describe('RememberedAnswers', () => {
  it('keys a request by what decoding and location read, so that no two different requests share a key', () => {
    const answers = new RememberedAnswers(10);
    const key = answers.keyOf(request());
    expect(answers.keyOf(request())).toBe(key);
    for (const other of [
      request({ ip: '203.0.113.10' }),
      request({ contentType: 'text/plain' }),
      request({ contentEncoding: 'gzip' }),
      request({ compression: 'base64' }),
      request({ data: 'e30=' }),
      request({ body: Buffer.from('{"token":"phc_x","distinct_id":"bob"}') }),
    ]) {
      expect(answers.keyOf(other)).not.toBe(key);
    }
    // Parts that would run together when joined, told apart.
    expect(answers.keyOf(request({ data: 'a', compression: '' }))).not.toBe(answers.keyOf(request({ data: '', compression: 'a' })));
    expect(answers.keyOf(request({ ip: 'x', body: Buffer.from('y') }))).not.toBe(answers.keyOf(request({ ip: 'xy', body: Buffer.from('') })));
  });

  it('remembers nothing when off, or for a body larger than SDKs send', () => {
    expect(new RememberedAnswers(0).keyOf(request())).toBeNull();
    expect(new RememberedAnswers(10).keyOf(request({ body: Buffer.alloc(4097, 'a') }))).toBeNull();
  });

  it('keeps at most its number of answers, forgetting the least recently used first', () => {
    const answers = new RememberedAnswers(2);
    answers.remember('a', answer('a'));
    answers.remember('b', answer('b'));
    answers.remember('b', answer('b2'));
    expect(answers.get('a')?.distinctId).toBe('a');
    answers.remember('c', answer('c'));
    expect(answers.get('b')).toBeUndefined();
    expect([answers.get('a')?.distinctId, answers.get('c')?.distinctId]).toEqual(['a', 'c']);
  });
});

describe('mayRemember: an answer is remembered only when all it read besides the request is seen to change', () => {
  const sources = (overrides: Partial<AnswerSources> = {}, needs: Partial<ProjectFlags['needs']> = {}, continuityKeys: string[] = []): AnswerSources => ({
    personFromCopy: true,
    storeFailed: false,
    readStoredGroups: false,
    definitions: { needs: { listedCohorts: false, groupKeys: new Map(), clock: false, ...needs }, continuityKeys },
    ...overrides,
  });

  it('remembers an answer from the person copy, the definitions and the request alone', () => {
    expect(mayRemember(sources())).toBe(true);
  });

  it('not when the person came from Redis or Postgres, whose changes this process does not see', () => {
    expect(mayRemember(sources({ personFromCopy: false }))).toBe(false);
  });

  it('not when a store failed, as the answer then leaves flags out', () => {
    expect(mayRemember(sources({ storeFailed: true }))).toBe(false);
  });

  it('not when it read stored group properties, static cohorts or continuity overrides', () => {
    expect(mayRemember(sources({ readStoredGroups: true }))).toBe(false);
    expect(mayRemember(sources({}, { listedCohorts: true }))).toBe(false);
    expect(mayRemember(sources({}, {}, ['checkout']))).toBe(false);
  });

  it('not when a flag compares a date, which may be relative to now', () => {
    expect(mayRemember(sources({}, { clock: true }))).toBe(false);
  });
});
