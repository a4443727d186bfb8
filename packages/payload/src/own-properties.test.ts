import { assignOwn, setOwn } from './own-properties.js';

describe('assignOwn', () => {
  it('merges as object spreads do: later sources win, keys keep their first place', () => {
    const a = { plan: 'free', age: 30, 2: 'two' };
    const b = { age: 40, email: 'x@acme.test', 1: 'one' };
    const target = { ...a };
    const merged = assignOwn(target, b);
    expect(merged).toBe(target);
    expect(Object.entries(merged)).toEqual(Object.entries({ ...a, ...b }));
  });

  it('keeps a parsed __proto__ key as data, as a spread does, leaving the prototype alone', () => {
    const parsed = JSON.parse('{"x":1,"__proto__":{"polluted":true},"y":2}') as Record<string, unknown>;
    const merged = assignOwn({ y: 0 }, parsed);
    const spread = { ...{ y: 0 }, ...parsed };
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(merged, '__proto__')).toEqual(Object.getOwnPropertyDescriptor(spread, '__proto__'));
    expect(JSON.stringify(merged)).toBe('{"y":2,"x":1,"__proto__":{"polluted":true}}');
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('takes a missing source as empty', () => {
    expect(assignOwn(assignOwn({ a: 1 }, undefined), null)).toEqual({ a: 1 });
  });
});

describe('setOwn', () => {
  it('sets a __proto__ key as Object.fromEntries does', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', 'x');
    expect(JSON.stringify(target)).toBe(JSON.stringify(Object.fromEntries([['__proto__', 'x']])));
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
  });
});
