import { addressOf, applyChunk, chunkEventOf, extractPersonUpdates, groupByPersons, personlessPersonId, withGeoip, type ChunkEvent, type ChunkResult, type StoredPerson } from './index.js';

const TEAM = 1;
const at = (second: number) => new Date(Date.UTC(2026, 5, 1, 12, 0, second));

const event = (name: string, distinctId: string, properties: Record<string, unknown> = {}, second = 0): ChunkEvent =>
  chunkEventOf({ event: name, distinct_id: distinctId, uuid: 'u', properties }, at(second));

describe('grouping a chunk by the persons its events touch', () => {
  const e = (name: string, distinctId: string, properties: Record<string, unknown> = {}, teamId = TEAM) => ({ teamId, event: event(name, distinctId, properties) });

  it('puts events that share a distinct id, or are linked by identify or alias, in one group in chunk order', () => {
    const groups = groupByPersons([
      e('page', 'a'),
      e('page', 'anon'),
      e('$identify', 'user', { $anon_distinct_id: 'anon' }),
      e('page', 'user'),
      e('$create_alias', 'b', { alias: 'c' }),
      e('page', 'c'),
      e('page', 'a', { $set: { x: 1 } }),
    ]);
    expect(groups).toEqual([[0, 6], [1, 2, 3], [4, 5]]);
  });

  it('joins groups transitively through chains of links', () => {
    const groups = groupByPersons([e('page', 'x'), e('page', 'z'), e('$create_alias', 'y', { alias: 'z' }), e('$identify', 'x', { $anon_distinct_id: 'y' })]);
    expect(groups).toEqual([[0, 1, 2, 3]]);
  });

  it('keeps projects apart even for the same distinct id', () => {
    expect(groupByPersons([e('page', 'p'), e('page', 'p', {}, 2), e('page', 'p')])).toEqual([[0, 2], [1]]);
  });

  it('leaves unrelated events independent', () => {
    expect(groupByPersons([e('page', 'a'), e('page', 'b'), e('$identify', 'c', {})])).toEqual([[0], [1], [2]]);
  });
});

describe('what a chunk keeps of an event for its person', () => {
  it('keeps the ids an identity event links and the updates it asks for', () => {
    const properties = { $anon_distinct_id: 'anon', $set: { email: 'u@shop.test' }, $browser: 'Firefox' };
    expect(event('$identify', 'user', properties, 1)).toEqual({
      personless: false,
      event: '$identify',
      distinctId: 'user',
      link: { intoId: 'user', otherId: 'anon' },
      updates: extractPersonUpdates({ properties }),
      timestamp: at(1),
    });
    expect(event('$pageview', 'user', { alias: 'other' })).toMatchObject({ link: null });
  });

  it('keeps only the distinct id and time of a personless event, which never changes a person', () => {
    expect(event('$pageview', 'ghost', { $process_person_profile: false, $browser: 'Firefox' }, 2)).toEqual({ personless: true, distinctId: 'ghost', timestamp: at(2) });
  });
});

/** A store that keeps what a chunk result says, the way the Postgres adapter does. */
class ReferenceStore {
  private nextId = 100;
  persons = new Map<number, StoredPerson>();
  owner = new Map<string, number>();
  tombstones = new Map<string, number>();

  state() {
    return {
      teamId: TEAM,
      persons: new Map([...this.owner].map(([id, personId]) => [id, { ...this.persons.get(personId)! }])),
      distinctIdStartVersion: (id: string) => this.tombstones.get(id) ?? 0,
      personStartVersion: () => 0,
    };
  }

  apply(result: ChunkResult): void {
    const stored = new Map<number, number>();
    for (const p of result.persons.filter((x) => x.created && !x.deleted)) stored.set(p.id, this.nextId++);
    const idOf = (id: number) => stored.get(id) ?? id;
    for (const p of result.persons.filter((x) => !x.deleted)) {
      this.persons.set(idOf(p.id), { id: idOf(p.id), uuid: p.uuid, properties: p.properties, isIdentified: p.isIdentified, createdAt: p.createdAt, version: p.version });
    }
    for (const m of result.moves) for (const [id, owner] of this.owner) if (owner === m.from) this.owner.set(id, idOf(m.into));
    for (const d of result.newDistinctIds) this.owner.set(d.distinctId, idOf(d.personId));
    for (const p of result.persons.filter((x) => x.deleted && !x.created)) this.persons.delete(p.id);
  }

  personOf(distinctId: string): Omit<StoredPerson, 'id'> | undefined {
    const person = this.persons.get(this.owner.get(distinctId)!);
    if (!person) return undefined;
    const { id: _id, ...rest } = person;
    return rest;
  }
}

const chunk = (store: ReferenceStore, events: ChunkEvent[]) => {
  const result = applyChunk(store.state(), events, (person) => person);
  store.apply(result);
  return result;
};

describe('applying a chunk of events to persons', () => {
  const scenario = [
    event('$pageview', 'anon-1', { $current_url: 'https://shop.test/a' }, 1),
    event('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'u1@shop.test' } }, 2),
    event('$pageview', 'anon-2', { $set_once: { first: 'x' } }, 3),
    event('$identify', 'user-2', { $anon_distinct_id: 'anon-2' }, 4),
    event('$create_alias', 'anon-3', { alias: 'user-2' }, 5),
    event('purchase', 'user-2', { $set: { plan: 'pro' }, $unset: ['first'] }, 6),
    event('$identify', 'user-1', { $anon_distinct_id: 'user-2' }, 7),
    event('$pageview', 'ghost', { $process_person_profile: false }, 8),
    event('$pageview', 'anon-1', { $process_person_profile: false }, 9),
    event('$identify', 'new-a', { $anon_distinct_id: 'new-b', $set: { n: 1 } }, 10),
    event('$create_alias', 'c-1', { alias: 'c-2' }, 11),
  ];

  it('gives the same persons, distinct ids, versions and event outcomes as applying the events one at a time', () => {
    const together = new ReferenceStore();
    const oneByOne = new ReferenceStore();
    const all = chunk(together, scenario);
    const single = scenario.map((e) => chunk(oneByOne, [e]).outcomes[0]);
    expect(all.outcomes).toEqual(single);
    for (const id of ['anon-1', 'user-1', 'anon-2', 'user-2', 'anon-3', 'new-a', 'new-b', 'c-1', 'c-2', 'ghost']) {
      expect(together.personOf(id)).toEqual(oneByOne.personOf(id));
    }
  });

  it('merges an unidentified person into the identifying one and moves every distinct id', () => {
    const store = new ReferenceStore();
    chunk(store, scenario.slice(0, 6));
    const result = chunk(store, [scenario[6]!]);
    expect(result.merges).toHaveLength(0);
    // user-2 was identified by its own $identify, so the merge is refused with a warning.
    expect(result.outcomes[0]!.warnings).toEqual([expect.objectContaining({ type: 'cannot_merge_already_identified' })]);

    const fresh = new ReferenceStore();
    chunk(fresh, [event('$pageview', 'a', { $set: { colour: 'red', size: 1 } }, 1), event('$identify', 'b', { $set: { size: 2 } }, 2)]);
    const merged = chunk(fresh, [event('$identify', 'b', { $anon_distinct_id: 'a' }, 3)]);
    expect(merged.moves).toHaveLength(1);
    expect(merged.merges).toEqual([expect.objectContaining({ loserUuid: personlessPersonId(TEAM, 'a'), distinctIds: ['a'] })]);
    expect(fresh.personOf('a')).toEqual(fresh.personOf('b'));
    expect(fresh.personOf('b')).toMatchObject({ uuid: personlessPersonId(TEAM, 'b'), properties: { colour: 'red', size: 2 }, isIdentified: true, createdAt: at(1) });
  });

  it('sees the merges of earlier events in the chunk: a survivor is identified and is not merged away later', () => {
    const store = new ReferenceStore();
    chunk(store, [event('e', 'x', { $set: { x: 1 } }), event('e', 'y', { $set: { y: 1 } }), event('e', 'z', { $set: { z: 1 } })]);
    const [x, y] = [store.state().persons.get('x')!.id, store.state().persons.get('y')!.id];
    const result = chunk(store, [event('$create_alias', 'x', { alias: 'y' }, 1), event('$create_alias', 'z', { alias: 'y' }, 2)]);
    expect(result.moves).toEqual([{ from: y, into: x }]);
    expect(result.outcomes[1]!.warnings).toEqual([expect.objectContaining({ type: 'cannot_merge_already_identified' })]);
    expect(store.personOf('y')).toEqual(store.personOf('x'));
    expect(store.personOf('x')!.properties).toEqual({ x: 1, y: 1 });
    expect(store.personOf('z')!.properties).toEqual({ z: 1 });
  });

  it('merges the person an alias already has into an identified user’s person, whichever reached ingest first', () => {
    const store = new ReferenceStore();
    chunk(store, [event('$identify', 'user', { $anon_distinct_id: 'anon', $set: { email: 'a@b.c' } }), event('signed in', 'alias', { $set_once: { first: 'alias' } })]);
    const result = chunk(store, [event('$create_alias', 'user', { alias: 'alias' }, 1)]);
    expect(result.outcomes[0]!.warnings).toEqual([]);
    expect(store.personOf('alias')).toEqual(store.personOf('user'));
    expect(store.personOf('anon')).toEqual(store.personOf('user'));
    expect(store.personOf('user')).toMatchObject({ isIdentified: true, properties: { email: 'a@b.c', first: 'alias' } });
  });

  it('creates one identified person for two unknown ids, named after the event’s distinct id', () => {
    const store = new ReferenceStore();
    const result = chunk(store, [event('$create_alias', 'device', { alias: 'user' })]);
    expect(result.outcomes[0]!.person.uuid).toBe(personlessPersonId(TEAM, 'device'));
    expect(result.newDistinctIds.map((d) => d.distinctId)).toEqual(['device', 'user']);
    expect(store.personOf('user')).toMatchObject({ isIdentified: true });
  });

  it('reads but never creates a person for personless events', () => {
    const store = new ReferenceStore();
    const result = chunk(store, [event('p', 'solo', { $process_person_profile: false }, 1), event('p', 'known', { $set: { a: 1 } }, 2), event('p', 'known', { $process_person_profile: false }, 3)]);
    expect(result.outcomes[0]!.person).toEqual({ uuid: personlessPersonId(TEAM, 'solo'), properties: {}, createdAt: at(1) });
    expect(result.outcomes[2]!.person).toMatchObject({ properties: { a: 1 } });
    expect(store.personOf('solo')).toBeUndefined();
  });

  it('raises the version once per change and starts new ids above their tombstones', () => {
    const store = new ReferenceStore();
    store.tombstones.set('t', 7);
    const result = chunk(store, [event('e', 't', { $set: { a: 1 } }), event('e', 't', { $set: { a: 2 } }), event('e', 't', { $set: { a: 2 } })]);
    expect(result.newDistinctIds).toEqual([expect.objectContaining({ distinctId: 't', version: 7 })]);
    expect(store.personOf('t')).toMatchObject({ version: 1, properties: { a: 2 } });
  });
});

describe('GeoIP enrichment', () => {
  const location = { $geoip_country_code: 'GB', $geoip_city_name: 'London' };
  const raw = (properties: Record<string, unknown>) => ({ event: 'e', distinct_id: 'd', uuid: 'u', properties });

  it('puts the location on the event, as $set and as $initial_geoip_* $set_once, the client’s own values winning', () => {
    expect(withGeoip(raw({ $set: { $geoip_city_name: 'Mine' }, $set_once: { $initial_geoip_country_code: 'FR' } }), location).properties).toEqual({
      $geoip_country_code: 'GB',
      $geoip_city_name: 'London',
      $set: { $geoip_country_code: 'GB', $geoip_city_name: 'Mine' },
      $set_once: { $initial_geoip_country_code: 'FR', $initial_geoip_city_name: 'London' },
    });
  });

  it('puts the location only on the event itself when the event is personless', () => {
    expect(withGeoip(raw({ $process_person_profile: false, $set: { a: 1 } }), location).properties).toEqual({
      $geoip_country_code: 'GB',
      $geoip_city_name: 'London',
      $process_person_profile: false,
      $set: { a: 1 },
    });
  });

  it('does nothing with $geoip_disable or an unknown address', () => {
    const disabled = raw({ $geoip_disable: true });
    expect(withGeoip(disabled, location)).toBe(disabled);
    const plain = raw({});
    expect(withGeoip(plain, {})).toBe(plain);
  });

  it('locates by the event’s own $ip before the capturing address', () => {
    expect(addressOf(raw({ $ip: '81.2.69.142' }), '10.0.0.1')).toBe('81.2.69.142');
    expect(addressOf(raw({}), '10.0.0.1')).toBe('10.0.0.1');
  });
});
