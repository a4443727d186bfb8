import { postgresSafeJson } from './postgres-destination.js';

describe('postgresSafeJson', () => {
  it('drops what jsonb refuses: NUL characters and lone surrogates', () => {
    const json = JSON.stringify({ nul: 'a\u0000b', high: 'x\ud83dy', low: 'x\ude00y', pair: '😀', escaped: 'a\\u0000b' });
    expect(JSON.parse(postgresSafeJson(json))).toEqual({ nul: 'ab', high: 'xy', low: 'xy', pair: '😀', escaped: 'a\\u0000b' });
    expect(postgresSafeJson('"\\ud83d\\ude00"')).toBe('"\\ud83d\\ude00"');
  });
});
