import { parseIdList, parsePropertiesJson, personDisplayName, propertiesJson, propertiesPatch, propertiesTimeline, propertyChanges } from './index.js';

describe('display name', () => {
  it('prefers email, then name, then username, then the first distinct id', () => {
    expect(personDisplayName({ name: 'Ann', email: 'ann@example.test' }, ['a'])).toBe('ann@example.test');
    expect(personDisplayName({ username: 'ann_1', name: 'Ann' }, ['a'])).toBe('Ann');
    expect(personDisplayName({ username: 'ann_1' }, ['a'])).toBe('ann_1');
    expect(personDisplayName({ email: '  ', plan: 'pro' }, ['first', 'second'])).toBe('first');
    expect(personDisplayName(null, [])).toBe('');
  });
});

describe('properties patch', () => {
  /** `(before || set) - unset`, as Postgres applies it to jsonb. */
  const applied = (before: Record<string, unknown>, patch: { set: string; unset: string[] }) => {
    const result: Record<string, unknown> = JSON.parse(JSON.stringify({ ...before, ...JSON.parse(patch.set) }));
    for (const key of patch.unset) delete result[key];
    return result;
  };

  it('sets only the keys that are new or changed, and unsets the keys that went', () => {
    const before = { url: '/a', browser: 'Chrome', nested: { x: [1, 2] }, gone: true, same: 1 };
    const after = { url: '/b', browser: 'Chrome', nested: { x: [1, 2] }, same: 1, added: null };
    const patch = propertiesPatch(before, after);
    expect(JSON.parse(patch.set)).toEqual({ url: '/b', added: null });
    expect(patch.unset).toEqual(['gone']);
    expect(applied(before, patch)).toEqual(after);
  });

  it('writes a changed nested value whole, and a __proto__ key as a property', () => {
    const before = JSON.parse('{"__proto__":{"a":1},"nested":{"x":1}}');
    const after = JSON.parse('{"__proto__":{"a":2},"nested":{"x":1,"y":2}}');
    const patch = propertiesPatch(before, after);
    expect(patch.set).toBe('{"__proto__":{"a":2},"nested":{"x":1,"y":2}}');
    expect(applied(before, patch)).toEqual(after);
  });

  it('is empty when nothing changed', () => {
    expect(propertiesPatch({ a: 1, b: { c: 'd' } }, { a: 1, b: { c: 'd' } })).toEqual({ set: '{}', unset: [] });
  });
});

describe('property changes', () => {
  it('lists created, changed and deleted keys with before and after, skipping equal ones', () => {
    expect(propertyChanges({ a: 1, b: { x: 1 }, c: 'gone' }, { a: 2, b: { x: 1 }, d: true })).toEqual([
      { type: 'Person', action: 'changed', field: 'a', before: 1, after: 2 },
      { type: 'Person', action: 'deleted', field: 'c', before: 'gone', after: null },
      { type: 'Person', action: 'created', field: 'd', before: null, after: true },
    ]);
  });
});

describe('properties timeline', () => {
  it('starts a point where the properties change and counts the events each point covers', () => {
    const points = propertiesTimeline([
      { timestamp: 't1', properties: { plan: 'free' } },
      { timestamp: 't2', properties: { plan: 'free' } },
      { timestamp: 't3', properties: { plan: 'pro', seats: 2 } },
      { timestamp: 't4', properties: { seats: 2, plan: 'pro' } },
      { timestamp: 't5', properties: { plan: 'free' } },
    ]);
    expect(points).toEqual([
      { timestamp: 't1', properties: { plan: 'free' }, relevant_event_count: 2, start_event_timestamp: 't1', end_event_timestamp: 't2' },
      { timestamp: 't3', properties: { plan: 'pro', seats: 2 }, relevant_event_count: 2, start_event_timestamp: 't3', end_event_timestamp: 't4' },
      { timestamp: 't5', properties: { plan: 'free' }, relevant_event_count: 1, start_event_timestamp: 't5', end_event_timestamp: 't5' },
    ]);
    expect(propertiesTimeline([])).toEqual([]);
  });
});

describe('id lists', () => {
  it('reads JSON arrays, comma-separated lists and repeated parameters', () => {
    expect(parseIdList([1, '2'])).toEqual(['1', '2']);
    expect(parseIdList('[1, "a"]')).toEqual(['1', 'a']);
    expect(parseIdList(['[3,4]'])).toEqual(['3', '4']);
    expect(parseIdList('5, 6,,7')).toEqual(['5', '6', '7']);
    expect(parseIdList(undefined)).toEqual([]);
  });

  it('names what is wrong with a malformed list', () => {
    expect(parseIdList('[1,')).toEqual({ problem: 'is not a valid JSON list' });
    expect(parseIdList([{ id: 1 }])).toEqual({ problem: 'must be a list of strings or numbers' });
    expect(parseIdList('{"a":1}')).toEqual({ problem: 'must be a list' });
  });
});

describe('properties as JSON', () => {
  it('is the JSON text of the properties, the same text for the same object', () => {
    const properties = { email: 'a@b.io', nested: { n: 1 } };
    const text = propertiesJson(properties);
    expect(JSON.parse(text)).toEqual(properties);
    expect(propertiesJson(properties)).toBe(text);
    expect(propertiesJson({ ...properties, plan: 'pro' })).toBe('{"email":"a@b.io","nested":{"n":1},"plan":"pro"}');
  });

  it('keeps the text properties were parsed from as their JSON, not written out again', () => {
    const stored = '{"n": 1.50, "email": "a@b.io", "tab": "a\\tb"}';
    const properties = parsePropertiesJson(stored);
    expect(properties).toEqual({ n: 1.5, email: 'a@b.io', tab: 'a\tb' });
    expect(propertiesJson(properties)).toBe(stored);
    expect(propertiesJson({ ...properties })).toBe('{"n":1.5,"email":"a@b.io","tab":"a\\tb"}');
  });
});
