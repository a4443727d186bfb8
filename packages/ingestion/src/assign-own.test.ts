import { assignOwn } from './assign-own.js';

describe('assigning own properties', () => {
  it('gives what a spread gives: later values win, keys keep their first place', () => {
    const target = { a: 1, b: 1 };
    const source = { c: 2, a: 2 };
    const spread = { ...target, ...source };
    const assigned = assignOwn(target, source);
    expect(assigned).toBe(target);
    expect(Object.entries(assigned)).toEqual(Object.entries(spread));
  });

  it('keeps a parsed `__proto__` key as a property, as a spread does, without touching the prototype', () => {
    const source = JSON.parse('{"x":1,"__proto__":{"polluted":true},"y":2}') as Record<string, unknown>;
    const assigned = assignOwn({ y: 0 }, source);
    expect(Object.getPrototypeOf(assigned)).toBe(Object.prototype);
    expect(JSON.stringify(assigned)).toBe(JSON.stringify({ ...{ y: 0 }, ...source }));
    expect(JSON.stringify(assigned)).toBe('{"y":2,"x":1,"__proto__":{"polluted":true}}');
  });
});
