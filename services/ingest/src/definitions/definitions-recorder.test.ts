import { DefinitionType } from '@tributary/ingestion';
import { DefinitionUpdates } from './definition-updates.js';
import { DefinitionsRecorder } from './definitions-recorder.js';

const HOUR = 3_600_000;
const start = Date.parse('2026-06-01T12:00:00Z');

function recorder(options: { maxEntries?: number } = {}) {
  let now = start;
  const r = new DefinitionsRecorder({ ...options, clock: () => now });
  return { r, advance: (ms: number) => (now += ms) };
}

const names = (u: DefinitionUpdates | null) => ({
  events: (u?.events ?? []).map((e) => e.name),
  properties: (u?.properties ?? []).map((p) => `${p.type}:${p.groupTypeIndex ?? ''}:${p.event ?? ''}:${p.name}:${p.propertyType}`),
});

describe('DefinitionsRecorder', () => {
  it('lists an event name and its property keys, with their inferred types, and person properties of $set and $set_once', () => {
    const { r } = recorder();
    const u = r.observe(1, 'purchase', { price: 9.5, plan: 'pro', $set: { email: 'a@b.c' }, $set_once: { first_visit: '2026-05-01' }, $groups: { company: 'acme' } });
    expect(names(u)).toEqual({
      events: ['purchase'],
      properties: ['1::purchase:price:Numeric', '1::purchase:plan:String', '2:::email:String', '2:::first_visit:DateTime'],
    });
  });

  it('lists nothing more for what was written, until the event is due a last-seen refresh', () => {
    const { r, advance } = recorder();
    r.recorded(r.observe(1, 'purchase', { price: 1, $set: { email: 'x' } })!);
    expect(r.observe(1, 'purchase', { price: 2, $set: { email: 'y' } })).toBeNull();
    // A new key on a known event: only the key.
    expect(names(r.observe(1, 'purchase', { price: 2, coupon: 'A' }))).toEqual({ events: [], properties: ['1::purchase:coupon:String'] });
    // A known key on another event is linked to that event too.
    expect(names(r.observe(1, 'refund', { price: 2 }))).toEqual({ events: ['refund'], properties: ['1::refund:price:Numeric'] });
    advance(HOUR - 1);
    expect(r.observe(1, 'purchase', { price: 2 })).toBeNull();
    advance(1);
    const due = r.observe(1, 'purchase', { price: 2 });
    expect(names(due)).toEqual({ events: ['purchase'], properties: [] });
    expect(due!.events[0]!.seenAt).toEqual(new Date(start + HOUR));
  });

  it('keeps projects apart', () => {
    const { r } = recorder();
    r.recorded(r.observe(1, 'purchase', { price: 1 })!);
    expect(names(r.observe(2, 'purchase', { price: 1 }))).toEqual({ events: ['purchase'], properties: ['1::purchase:price:Numeric'] });
  });

  it('lists again what was observed but not written, so a failed write or a chunk processed again loses nothing', () => {
    const { r } = recorder();
    const first = r.observe(1, 'purchase', { price: 1 });
    expect(names(r.observe(1, 'purchase', { price: 1 }))).toEqual(names(first));
  });

  it('lists a $groupidentify by name only, and its group properties once its group type index is known', () => {
    const { r } = recorder();
    const u = r.observe(1, '$groupidentify', { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 5 }, $lib: 'web' })!;
    expect(names(u)).toEqual({ events: ['$groupidentify'], properties: [] });
    r.observeGroup(1, 0, { seats: 5, name: 'Acme' }, u);
    expect(names(u).properties).toEqual(['3:0::seats:Numeric', '3:0::name:String']);
    r.recorded(u);
    const again = new DefinitionUpdates();
    r.observeGroup(1, 0, { seats: 6 }, again);
    r.observeGroup(1, 1, { seats: 6 }, again);
    expect(names(again).properties).toEqual(['3:1::seats:Numeric']);
  });

  it('skips update keys, names too long for the columns, and the properties of ingestion\'s own events', () => {
    const { r } = recorder();
    expect(names(r.observe(1, 'e', { $set: {}, $unset: ['a'], $group_0: 'x', ['k'.repeat(201)]: 1 }))).toEqual({ events: ['e'], properties: [] });
    expect(r.observe(1, 'x'.repeat(201), { a: 1 })).toBeNull();
    expect(names(r.observe(1, '$$plugin_metrics', { a: 1 }))).toEqual({ events: ['$$plugin_metrics'], properties: [] });
  });

  it('forgets everything past its bound, and lists again what it sees next', () => {
    const { r } = recorder({ maxEntries: 3 });
    r.recorded(r.observe(1, 'a', { x: 1 })!);
    expect(r.observe(1, 'a', { x: 1 })).toBeNull();
    r.recorded(r.observe(1, 'b', { y: 1, z: 1 })!);
    expect(names(r.observe(1, 'a', { x: 1 }))).toEqual({ events: ['a'], properties: ['1::a:x:Numeric'] });
  });

  it('marks person definitions of one project only', () => {
    const { r } = recorder();
    r.recorded(r.observe(1, 'e', { $set: { plan: 'pro' } })!);
    const other = r.observe(2, 'e', { $set: { plan: 'pro' } })!;
    expect(other.properties.map((p) => [p.teamId, p.type])).toEqual([[2, DefinitionType.person]]);
  });
});
