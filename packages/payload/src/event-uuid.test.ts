import { eventUuid } from './event-uuid.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('event uuids', () => {
  it('are version 7, unique and increasing across many pool refills, within one millisecond too', () => {
    const ids = Array.from({ length: 5_000 }, () => eventUuid());
    expect(ids.every((id) => V7.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
  });

  it('carry the time they were made in their first 48 bits', () => {
    const before = Date.now();
    const id = eventUuid();
    const msecs = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(Date.now() + 1);
  });
});
