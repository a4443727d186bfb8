import {
  applyPersonUpdates,
  computeTimestamp,
  extractPersonUpdates,
  groupColumns,
  groupTypesOf,
  initialPersonProperties,
  isIllegalDistinctId,
  mergeGroupProperties,
  mergeIdsOf,
  nextGroupTypeIndex,
  parseEvent,
  personlessPersonId,
  planMerge,
  planSplit,
  processesPersonProfile,
  readGroupIdentify,
  splitPersonUuid,
  stripPersonUpdates,
  surveyWarning,
  type PersonSnapshot,
} from './index.js';

const now = new Date('2026-06-01T12:00:00.000Z');

describe('timestamps', () => {
  it('uses now when the event has no timestamp', () => {
    expect(computeTimestamp({ timestamp: undefined, offset: undefined, sentAt: null, now })).toEqual({ timestamp: now });
  });

  it('takes the timestamp as is without sent_at', () => {
    expect(computeTimestamp({ timestamp: '2026-06-01T10:00:00Z', offset: undefined, sentAt: null, now }).timestamp.toISOString()).toBe('2026-06-01T10:00:00.000Z');
  });

  it('corrects clock skew with sent_at: now + (timestamp - sent_at)', () => {
    const result = computeTimestamp({ timestamp: '2026-06-01T09:59:00Z', offset: undefined, sentAt: new Date('2026-06-01T10:00:00Z'), now });
    expect(result.timestamp.toISOString()).toBe('2026-06-01T11:59:00.000Z');
  });

  it('offset wins: now - offset', () => {
    expect(computeTimestamp({ timestamp: '2020-01-01T00:00:00Z', offset: 1500, sentAt: null, now }).timestamp.toISOString()).toBe('2026-06-01T11:59:58.500Z');
  });

  it('clamps a timestamp more than 23 hours ahead to now, with a warning', () => {
    const result = computeTimestamp({ timestamp: '2026-06-02T12:00:00Z', offset: undefined, sentAt: null, now });
    expect(result.timestamp).toEqual(now);
    expect(result.warning?.type).toBe('event_timestamp_in_future');
    expect(computeTimestamp({ timestamp: '2026-06-02T10:00:00Z', offset: undefined, sentAt: null, now }).warning).toBeUndefined();
  });

  it('falls back to now with a warning for a time before 1970, which the store cannot hold', () => {
    const earliestJsDate = new Date(-8.64e15).toISOString();
    for (const input of [
      { timestamp: earliestJsDate, offset: undefined, sentAt: null },
      { timestamp: -8.64e15, offset: undefined, sentAt: null },
      { timestamp: '1969-12-31T23:59:59Z', offset: undefined, sentAt: null },
      { timestamp: '2026-06-01T09:00:00Z', offset: undefined, sentAt: new Date('2226-06-01T10:00:00Z') },
      { timestamp: undefined, offset: 8.64e15, sentAt: null },
    ]) {
      const result = computeTimestamp({ ...input, now });
      expect(result.timestamp).toEqual(now);
      expect(result.warning).toMatchObject({ type: 'ignored_invalid_timestamp', details: { reason: 'before 1970-01-01' } });
    }
    expect(computeTimestamp({ timestamp: '1970-01-01T00:00:00Z', offset: undefined, sentAt: null, now }).warning).toBeUndefined();
  });

  it('falls back to now with a warning for an unparsable timestamp', () => {
    const result = computeTimestamp({ timestamp: 'yesterday-ish', offset: undefined, sentAt: null, now });
    expect(result).toEqual({ timestamp: now, warning: { type: 'ignored_invalid_timestamp', details: { timestamp: 'yesterday-ish' } } });
  });
});

describe('illegal distinct ids', () => {
  it.each(['', '  ', 'anonymous', 'GUEST', 'distinctId', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'False',
    '[object Object]', 'NaN', 'None', 'none', 'null', '0', '"null"', "'0'", '"undefined"'])('%j is illegal', (id) => {
    expect(isIllegalDistinctId(id)).toBe(true);
  });

  it.each(['user-1', 'NULL', 'Nan', '00', 'alice@example.com'])('%j is a real id', (id) => {
    expect(isIllegalDistinctId(id)).toBe(false);
  });
});

describe('person property updates', () => {
  it('merges $set from properties and the top level, the top level winning; same for $set_once', () => {
    const updates = extractPersonUpdates({ properties: { $set: { a: 1, b: 1 }, $set_once: { c: 1 } }, $set: { b: 2 }, $set_once: { c: 2 } });
    expect(updates.set).toEqual({ a: 1, b: 2 });
    expect(updates.setOnce).toEqual({ c: 2 });
  });

  it('reads $unset as a list of keys or an object’s keys', () => {
    expect(extractPersonUpdates({ properties: { $unset: ['a', 'b'] } }).unset).toEqual(['a', 'b']);
    expect(extractPersonUpdates({ $unset: { c: null } }).unset).toEqual(['c']);
  });

  it('copies marketing and device properties to $set and as $initial_* to $set_once', () => {
    const updates = extractPersonUpdates({ properties: { $browser: 'Chrome', utm_source: 'news', other: 1 } });
    expect(updates.set).toEqual({ $browser: 'Chrome', utm_source: 'news' });
    expect(updates.setOnce).toEqual({ $initial_browser: 'Chrome', $initial_utm_source: 'news' });
  });

  it('$set_once fills only missing keys, $set overwrites, $unset removes', () => {
    const result = applyPersonUpdates({ a: 1, b: 1, c: 1 }, { set: { b: 2 }, setOnce: { a: 9, d: 4 }, unset: ['c'] });
    expect(result).toEqual({ properties: { a: 1, b: 2, d: 4 }, changed: true });
  });

  it('treats keys named like what every object inherits, and __proto__, as the person’s own properties', () => {
    const updates = extractPersonUpdates(JSON.parse('{"properties":{"$set":{"__proto__":{"x":1}},"$set_once":{"constructor":"c","toString":"t","x":2},"$unset":["valueOf"]}}'));
    const { properties } = applyPersonUpdates(JSON.parse('{"__proto__":0,"valueOf":1}'), updates);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(properties))).toEqual(JSON.parse('{"__proto__":{"x":1},"constructor":"c","toString":"t","x":2}'));
  });

  it('reports no change when nothing differs, and keeps the same properties object', () => {
    const current = { a: 1 };
    const result = applyPersonUpdates(current, { set: { a: 1 }, setOnce: { a: 2 }, unset: ['z'] });
    expect(result.changed).toBe(false);
    expect(result.properties).toBe(current);
  });

  it('never changes the properties it was given: a change makes a new object', () => {
    const current = { a: 1, c: 1 };
    const result = applyPersonUpdates(current, { set: { a: 2 }, setOnce: {}, unset: ['c'] });
    expect(result.properties).toEqual({ a: 2 });
    expect(current).toEqual({ a: 1, c: 1 });
  });

  it('a new person gets {...$set_once, ...$set}', () => {
    expect(initialPersonProperties({ set: { a: 'set' }, setOnce: { a: 'once', b: 'once' }, unset: [] })).toEqual({ a: 'set', b: 'once' });
  });
});

describe('merges', () => {
  const person = (id: number, overrides: Partial<PersonSnapshot> = {}): PersonSnapshot => ({
    id,
    properties: { [`p${id}`]: id, shared: id },
    isIdentified: false,
    createdAt: new Date(Date.UTC(2026, 0, id)),
    version: id,
    ...overrides,
  });

  it('reads $identify as anon into distinct id, and $create_alias as alias into distinct id', () => {
    expect(mergeIdsOf('$identify', 'user', { $anon_distinct_id: 'anon' })).toEqual({ intoId: 'user', otherId: 'anon' });
    expect(mergeIdsOf('$create_alias', 'user', { alias: 'device' })).toEqual({ intoId: 'user', otherId: 'device' });
    expect(mergeIdsOf('$identify', 'user', {})).toBeNull();
    expect(mergeIdsOf('clicked', 'user', { alias: 'x' })).toBeNull();
  });

  it('does nothing for equal ids', () => {
    expect(planMerge({ intoId: 'a', otherId: 'a', into: null, other: null })).toEqual({ kind: 'none' });
  });

  it('refuses a merge with an illegal id on either side', () => {
    expect(planMerge({ intoId: 'user', otherId: 'anonymous', into: null, other: null })).toMatchObject({ kind: 'refused', warning: 'cannot_merge_with_illegal_distinct_id' });
    expect(planMerge({ intoId: 'null', otherId: 'anon', into: null, other: null })).toMatchObject({ kind: 'refused' });
  });

  it('creates one person for two unknown ids', () => {
    expect(planMerge({ intoId: 'a', otherId: 'b', into: null, other: null })).toEqual({ kind: 'create', distinctIds: ['a', 'b'] });
  });

  it('attaches the unknown id to the known person, whichever side it is', () => {
    expect(planMerge({ intoId: 'a', otherId: 'b', into: person(1), other: null })).toMatchObject({ kind: 'attach', person: { id: 1 }, distinctId: 'b' });
    expect(planMerge({ intoId: 'a', otherId: 'b', into: null, other: person(2) })).toMatchObject({ kind: 'attach', person: { id: 2 }, distinctId: 'a' });
  });

  it('does nothing when both ids already share a person', () => {
    expect(planMerge({ intoId: 'a', otherId: 'b', into: person(1), other: person(1) })).toEqual({ kind: 'none' });
  });

  it('merges two persons: survivor’s properties win, earlier created_at, version max + 1', () => {
    const plan = planMerge({ intoId: 'a', otherId: 'b', into: person(3), other: person(2) });
    expect(plan).toEqual({
      kind: 'merge',
      survivor: person(3),
      loser: person(2),
      properties: { p2: 2, p3: 3, shared: 3 },
      createdAt: new Date(Date.UTC(2026, 0, 2)),
      version: 4,
    });
  });

  it('refuses to absorb a person that is already identified', () => {
    expect(planMerge({ intoId: 'a', otherId: 'b', into: person(1), other: person(2, { isIdentified: true }) })).toMatchObject({ kind: 'refused', warning: 'cannot_merge_already_identified' });
    expect(planMerge({ intoId: 'a', otherId: 'b', into: person(1, { isIdentified: true }), other: person(2) }).kind).toBe('merge');
  });
});

describe('personless events', () => {
  it('derive a stable person id from project and distinct id (uuid v5)', () => {
    const id = personlessPersonId(1, 'anon-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/);
    expect(personlessPersonId(1, 'anon-1')).toBe(id);
    expect(personlessPersonId(2, 'anon-1')).not.toBe(id);
    // uuidv5("1:anon-1") in the reference's namespace, as Python's uuid.uuid5 computes it.
    expect(id).toBe('cfa956a0-5af4-51c6-9ef5-cb3c80e09b69');
  });

  it('are recognised by $process_person_profile false only', () => {
    expect(processesPersonProfile({ $process_person_profile: false })).toBe(false);
    expect(processesPersonProfile({ $process_person_profile: 'false' })).toBe(true);
    expect(processesPersonProfile({})).toBe(true);
  });

  it('lose their $set, $set_once and $unset', () => {
    expect(stripPersonUpdates({ $set: { a: 1 }, properties: { $set_once: { b: 1 }, $unset: ['c'], keep: 1 } })).toEqual({ properties: { keep: 1 } });
    const plain = { properties: { keep: 1 } };
    expect(stripPersonUpdates(plain)).toBe(plain);
  });
});

describe('groups', () => {
  it('allocates the next free index and nothing beyond five types', () => {
    expect(nextGroupTypeIndex([])).toBe(0);
    expect(nextGroupTypeIndex([0, 2])).toBe(1);
    expect(nextGroupTypeIndex([0, 1, 2, 3, 4])).toBeNull();
  });

  it('maps $groups to the $group_N columns, leaving out unknown types', () => {
    expect(groupColumns({ company: 'acme', team: 7, unknown: 'x' }, new Map([['company', 0], ['team', 3]]))).toEqual(['acme', '', '', '7', '']);
    expect(groupColumns('nope', new Map())).toEqual(['', '', '', '', '']);
  });

  it('reads the group types $groups links through, in order, skipping keys that are not strings or numbers', () => {
    expect(groupTypesOf({ team: 7, company: 'acme', broken: { a: 1 }, none: null })).toEqual(['team', 'company']);
    expect(groupTypesOf(['company'])).toEqual([]);
  });

  it('$groupidentify needs a type and a key', () => {
    expect(readGroupIdentify({ $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } })).toEqual({ ok: true, groupType: 'company', groupKey: 'acme', properties: { name: 'Acme' } });
    expect(readGroupIdentify({ $group_key: 'acme' })).toMatchObject({ ok: false });
    expect(readGroupIdentify({ $group_type: 'company' })).toMatchObject({ ok: false });
  });

  it('$group_set overwrites group properties', () => {
    expect(mergeGroupProperties({ name: 'Old', plan: 'free' }, { name: 'New' })).toEqual({ properties: { name: 'New', plan: 'free' }, changed: true });
    expect(mergeGroupProperties({ name: 'Same' }, { name: 'Same' }).changed).toBe(false);
  });
});

describe('parsing messages', () => {
  const message = (data: string) => ({ uuid: 'u', distinct_id: 'd', ip: null, data, now: now.toISOString(), sent_at: null, token: 't', historical_migration: false });

  it('reads the event with the message’s uuid and distinct id', () => {
    expect(parseEvent(message('{"event":"e","properties":{"a":1}}'))).toEqual({ kind: 'ok', event: { event: 'e', distinct_id: 'd', uuid: 'u', properties: { a: 1 } } });
    // posthog-js sends $identify's $set beside properties; the stored event keeps it in properties.
    expect(parseEvent(message('{"event":"$identify","properties":{"$set":{"a":1,"b":1}},"$set":{"b":2},"$set_once":{"c":3}}'))).toEqual({
      kind: 'ok',
      event: { event: '$identify', distinct_id: 'd', uuid: 'u', properties: { $set: { a: 1, b: 2 }, $set_once: { c: 3 } } },
    });
  });

  it('dead-letters data that is not an event object', () => {
    expect(parseEvent(message('{nope')).kind).toBe('dlq');
    expect(parseEvent(message('[1]')).kind).toBe('dlq');
    expect(parseEvent(message('{"event":"e","properties":[1]}')).kind).toBe('dlq');
  });

  it('drops an event without a name', () => {
    expect(parseEvent(message('{"properties":{}}'))).toEqual({ kind: 'drop', reason: 'missing event name' });
  });

  it('warns about a survey event without $survey_id, naming the property', () => {
    const [sent, ok] = ['{"event":"survey sent","properties":{}}', '{"event":"survey shown","properties":{"$survey_id":"s"}}'].map((d) => parseEvent(message(d)));
    expect(sent?.kind === 'ok' && surveyWarning(sent.event)).toEqual({ type: 'missing_survey_property', details: { event: 'survey sent', missingProperty: '$survey_id' } });
    expect(ok?.kind === 'ok' && surveyWarning(ok.event)).toBeNull();
  });

  it('warns about a survey sent without $survey_response, and takes a per-question response as one', () => {
    const warning = (properties: Record<string, unknown>, event = 'survey sent') => {
      const parsed = parseEvent(message(JSON.stringify({ event, properties })));
      return parsed.kind === 'ok' ? surveyWarning(parsed.event) : 'not parsed';
    };
    expect(warning({ $survey_id: 's' })).toEqual({ type: 'missing_survey_property', details: { event: 'survey sent', missingProperty: '$survey_response' } });
    expect(warning({ $survey_id: 's', $survey_response: 'yes' })).toBeNull();
    expect(warning({ $survey_id: 's', $survey_response_0b1c: 'yes' })).toBeNull();
    expect(warning({ $survey_id: 's', $survey_responses: 'yes' })).toEqual({ type: 'missing_survey_property', details: { event: 'survey sent', missingProperty: '$survey_response' } });
    expect(warning({ $survey_id: 's' }, 'survey dismissed')).toBeNull();
  });
});

describe('splits', () => {
  it('keeps the first distinct id, or main_distinct_id when it is one of them', () => {
    expect(planSplit(['a', 'b', 'c'])).toEqual({ keep: 'a', split: ['b', 'c'] });
    expect(planSplit(['a', 'b', 'c'], 'b')).toEqual({ keep: 'b', split: ['a', 'c'] });
    expect(planSplit(['a', 'b'], 'zzz')).toEqual({ keep: 'a', split: ['b'] });
    expect(planSplit([])).toBeNull();
  });

  it('derives the new persons’ uuids from project and distinct id', () => {
    expect(splitPersonUuid(1, 'b')).toBe(splitPersonUuid(1, 'b'));
    expect(splitPersonUuid(1, 'b')).not.toBe(splitPersonUuid(1, 'c'));
  });
});
