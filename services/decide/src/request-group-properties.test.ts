import { withRequestGroupProperties } from './request-group-properties.js';

describe('withRequestGroupProperties', () => {
  it('lays the request’s properties over the stored ones, type by type, the request’s winning', () => {
    const stored = { company: { seats: 5, plan: 'pro' }, project: { stage: 'beta' } };
    expect(withRequestGroupProperties(stored, { company: { seats: 50 }, team: { size: 3 } })).toEqual({ company: { seats: 50, plan: 'pro' }, project: { stage: 'beta' }, team: { size: 3 } });
    expect(withRequestGroupProperties({ company: { seats: 5 } }, undefined)).toEqual({ company: { seats: 5 } });
  });

  it('treats types named like Object’s own members as types like any other', () => {
    for (const type of ['__proto__', 'constructor', 'toString']) {
      const sent = JSON.parse(`{"${type}": {"seats": 50}}`) as Record<string, Record<string, unknown>>;
      const merged = withRequestGroupProperties({}, sent);
      expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
      expect(Object.hasOwn(merged, type) && merged[type]).toEqual({ seats: 50 });
      const stored = JSON.parse(`{"${type}": {"plan": "pro"}}`) as Record<string, Record<string, unknown>>;
      expect(withRequestGroupProperties(stored, sent)[type]).toEqual({ plan: 'pro', seats: 50 });
    }
  });
});
