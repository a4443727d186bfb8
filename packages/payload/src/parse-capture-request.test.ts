import { parseCaptureRequest } from './parse-capture-request.js';
import { checkToken } from './token.js';
import { extractDistinctId } from './distinct-id.js';

let counter = 0;
const newUuid = () => `00000000-0000-7000-8000-${String(++counter).padStart(12, '0')}`;
const parse = (value: unknown, query: Record<string, string> = {}) => parseCaptureRequest(value, { query, newUuid });
const ok = (value: unknown, query: Record<string, string> = {}) => {
  const result = parse(value, query);
  if (!result.ok) throw new Error(`expected ok, got ${result.detail}`);
  return result;
};

describe('body shapes', () => {
  it('reads a single event', () => {
    const result = ok({ api_key: 'phc_a', event: 'e', distinct_id: 'd', properties: { a: 1 } });
    expect(result.token).toBe('phc_a');
    expect(result.events).toHaveLength(1);
    expect(JSON.parse(result.events[0]!.data)).toMatchObject({ event: 'e', distinct_id: 'd', properties: { a: 1 } });
  });

  it('reads an array of events, each carrying the token', () => {
    const result = ok([{ token: 'phc_a', event: 'e1', distinct_id: 'd' }, { properties: { token: 'phc_a' }, event: 'e2', distinct_id: 'd' }]);
    expect(result.events.map((e) => JSON.parse(e.data).event)).toEqual(['e1', 'e2']);
  });

  it('reads a batch envelope with historical_migration and sent_at', () => {
    const result = ok({ api_key: 'phc_a', historical_migration: true, sent_at: '2026-01-01T00:00:00Z', batch: [{ event: 'e', properties: { distinct_id: 'd' } }] });
    expect(result).toMatchObject({ historicalMigration: true, sentAt: new Date('2026-01-01T00:00:00Z') });
    expect(result.events[0]!.distinctId).toBe('d');
  });

  it('takes sent_at from the _ query parameter in milliseconds', () => {
    expect(ok({ api_key: 'phc_a', event: 'e', distinct_id: 'd' }, { _: '1767225600000' }).sentAt).toEqual(new Date(1767225600000));
  });

  it('takes digits in _ past the range of a date as no sent_at, as it does text that is no time', () => {
    expect(ok({ api_key: 'phc_a', event: 'e', distinct_id: 'd' }, { _: '18446744073709551616' }).sentAt).toBeNull();
  });

  it('rejects an empty batch with a 400', () => {
    expect(parse({ api_key: 'phc_a', batch: [] })).toMatchObject({ ok: false, status: 400, code: 'empty_batch' });
    expect(parse([])).toMatchObject({ ok: false, status: 400 });
  });

  it('rejects payloads that are not events', () => {
    expect(parse('hello')).toMatchObject({ ok: false, status: 400 });
    expect(parse([1, 2])).toMatchObject({ ok: false, status: 400, code: 'invalid_event' });
    expect(parse({ api_key: 'phc_a', event: 'e', distinct_id: 'd', properties: 'nope' })).toMatchObject({ ok: false, status: 400 });
  });
});

describe('tokens', () => {
  it('the batch-level key wins over the events’ keys', () => {
    expect(ok({ api_key: 'phc_batch', batch: [{ event: 'e', distinct_id: 'd', token: 'phc_other' }] }).token).toBe('phc_batch');
  });

  it('two different keys in one request is a 401', () => {
    expect(parse([{ api_key: 'phc_a', event: 'e', distinct_id: 'd' }, { api_key: 'phc_b', event: 'e', distinct_id: 'd' }])).toMatchObject({ ok: false, status: 401 });
  });

  it('a missing key is a 401', () => {
    expect(parse({ event: 'e', distinct_id: 'd' })).toMatchObject({ ok: false, status: 401, detail: expect.stringMatching(/missing/) });
  });

  it('keys are trimmed; empty, long, non-ASCII and personal keys are refused', () => {
    expect(checkToken('  phc_a ')).toEqual({ ok: true, token: 'phc_a' });
    expect(checkToken('   ')).toMatchObject({ ok: false });
    expect(checkToken('x'.repeat(65))).toMatchObject({ ok: false, detail: expect.stringMatching(/64/) });
    expect(checkToken('phc_é')).toMatchObject({ ok: false, detail: expect.stringMatching(/ASCII/) });
    expect(checkToken('phx_personal')).toMatchObject({ ok: false, detail: expect.stringMatching(/personal API key/) });
    expect(checkToken(42)).toMatchObject({ ok: false });
  });
});

describe('events', () => {
  it('drops events without a name or distinct id instead of failing the request', () => {
    const result = ok({ api_key: 'phc_a', batch: [{ distinct_id: 'd' }, { event: 'e' }, { event: 'e', distinct_id: '  ' }, { event: 'kept', distinct_id: 'd' }] });
    expect(result.events).toHaveLength(1);
    expect(result.dropped).toEqual([
      { index: 0, reason: 'missing_event_name' },
      { index: 1, reason: 'missing_distinct_id' },
      { index: 2, reason: 'missing_distinct_id' },
    ]);
  });

  it('keeps a client uuid, assigns one when empty, and rejects a malformed one', () => {
    const uuid = '0190f3c0-1234-7000-8000-00000000abcd';
    expect(ok({ api_key: 'phc_a', event: 'e', distinct_id: 'd', uuid }).events[0]!.uuid).toBe(uuid);
    expect(ok({ api_key: 'phc_a', event: 'e', distinct_id: 'd', uuid: '' }).events[0]!.uuid).toMatch(/^00000000-0000-7000-8000-/);
    expect(parse({ api_key: 'phc_a', event: 'e', distinct_id: 'd', uuid: 'not-a-uuid' })).toMatchObject({ ok: false, status: 400, code: 'invalid_uuid' });
  });

  it('without the body text, serialises each event with its uuid and normalised distinct id written in', () => {
    const [event] = ok({ api_key: 'phc_a', event: 'e', distinct_id: 12345, $set: { a: 1 } }).events;
    expect(JSON.parse(event!.data)).toMatchObject({ distinct_id: '12345', uuid: event!.uuid, $set: { a: 1 } });
  });
});

describe('event data from the body text', () => {
  const uuids = () => {
    let made = 0;
    return () => `00000000-0000-7000-8000-${String(++made).padStart(12, '0')}`;
  };
  /** Parsed with uuids of its own, so that two parses of one body assign the same ones. */
  const parseWith = (value: unknown, text?: string) => {
    const result = parseCaptureRequest(value, { query: {}, newUuid: uuids(), ...(text === undefined ? {} : { text }) });
    if (!result.ok) throw new Error(`expected ok, got ${result.detail}`);
    return result;
  };
  const parseText = (text: string, value: unknown = JSON.parse(text)) => parseWith(value, text);
  const withoutIds = ({ uuid: _uuid, distinct_id: _distinctId, ...rest }: Record<string, unknown>) => rest;

  it('is each event’s text as the client sent it, with uuid and distinct id normalised beside it', () => {
    const events = [
      '{"event":"kept","distinct_id":42,"uuid":"0190F3C0-1234-7000-8000-00000000ABCD","properties":{"q":"say \\"hi\\" \\\\","é":"\\u00e9🙂"}}',
      '{"event":"assigned","properties":{"distinct_id":"from-properties","n":1.50,"big":1e3}}',
    ];
    const text = ` {"api_key":"phc_a","batch":[${events.join(' , ')}]} `;
    const result = parseText(text);
    expect(result.events.map((e) => e.data)).toEqual(events);
    expect(result.events.map(({ uuid, distinctId }) => ({ uuid, distinctId }))).toEqual([
      { uuid: '0190f3c0-1234-7000-8000-00000000abcd', distinctId: '42' },
      { uuid: '00000000-0000-7000-8000-000000000001', distinctId: 'from-properties' },
    ]);
  });

  it('serialises an event whose text holds a newline, tab or carriage return, uuid and distinct id written in, as without the text', () => {
    const text = '[{"event":"compact","distinct_id":"d","token":"phc_a"},\n{"event":"tab",\t"distinct_id":"d","token":"phc_a"},{"event":"cr","distinct_id":\r"d","token":"phc_a"},\n  {\n  "event": "pretty",\n  "distinct_id": 7,\n  "token": "phc_a"\n}]';
    const [compact, ...serialised] = parseText(text).events;
    expect(compact!.data).toBe('{"event":"compact","distinct_id":"d","token":"phc_a"}');
    expect(serialised.map((e) => e.data)).toEqual([
      JSON.stringify({ event: 'tab', distinct_id: 'd', token: 'phc_a', uuid: '00000000-0000-7000-8000-000000000002' }),
      JSON.stringify({ event: 'cr', distinct_id: 'd', token: 'phc_a', uuid: '00000000-0000-7000-8000-000000000003' }),
      JSON.stringify({ event: 'pretty', distinct_id: '7', token: 'phc_a', uuid: '00000000-0000-7000-8000-000000000004' }),
    ]);
  });

  it('reads as the event did, apart from uuid and distinct id, for every body shape and layout', () => {
    const events: Record<string, unknown>[] = [
      { event: '$pageview', distinct_id: 'u1', properties: { $current_url: 'https://example.com/?q="x"&b=\\', nested: { list: [1, 'two', null, true], '': {} } } },
      { event: 'no distinct id', properties: { a: 1 } },
      { event: 'numeric id', distinct_id: 12345, uuid: '0190F3C0-1234-7000-8000-00000000ABCD', $set: { email: 'a@b.c' } },
      { event: 'multi-line text', properties: { distinct_id: 'p', text: 'line\none\ttab\r', emoji: '🙂', separator: '\u2028' } },
    ];
    const array = events.map((e) => ({ ...e, token: 'phc_a' }));
    const single = { ...events[0]!, api_key: 'phc_a' };
    const bodies: [body: unknown, raw: Record<string, unknown>[]][] = [[array, array], [{ api_key: 'phc_a', batch: events }, events], [single, [single]]];
    const ids = (result: ReturnType<typeof parseWith>) => result.events.map(({ uuid, distinctId }) => ({ uuid, distinctId }));
    for (const [body, raw] of bodies) {
      for (const [layout, text] of [['compact', JSON.stringify(body)], ['pretty', JSON.stringify(body, null, 2)], ['tabbed', JSON.stringify(body, null, '\t')]]) {
        const result = parseText(text!);
        const serialised = parseWith(JSON.parse(text!));
        expect(result).toEqual({ ...serialised, events: expect.any(Array) });
        expect(ids(result)).toEqual(ids(serialised));
        const kept = raw.filter((_, index) => !result.dropped.some((d) => d.index === index));
        expect(result.events.map((e) => withoutIds(JSON.parse(e.data)))).toEqual(kept.map(withoutIds));
        expect(result.events.map((e) => e.data)).toEqual(layout === 'compact' ? kept.map((e) => JSON.stringify(e)) : serialised.events.map((e) => e.data));
      }
    }
  });

  it('serialises every event when the text is not the one the value came from', () => {
    const value = [{ event: 'a', distinct_id: 'd', token: 'phc_a' }, { event: 'b', distinct_id: 'd', token: 'phc_a' }];
    const result = parseText(JSON.stringify(value.slice(0, 1)), value);
    expect(result.events.map((e) => JSON.parse(e.data))).toEqual(value.map((e, i) => ({ ...e, uuid: `00000000-0000-7000-8000-00000000000${i + 1}` })));
  });
});

describe('distinct ids', () => {
  it('falls back from distinct_id to $distinct_id to properties.distinct_id', () => {
    expect(extractDistinctId({ distinct_id: 'a', $distinct_id: 'b' })).toBe('a');
    expect(extractDistinctId({ $distinct_id: 'b', properties: { distinct_id: 'c' } })).toBe('b');
    expect(extractDistinctId({ properties: { distinct_id: 'c' } })).toBe('c');
  });

  it('stringifies numbers and cuts to 200 characters', () => {
    expect(extractDistinctId({ distinct_id: 42 })).toBe('42');
    expect(extractDistinctId({ distinct_id: 'x'.repeat(300) })).toHaveLength(200);
  });

  it('treats empty and missing ids as none', () => {
    expect(extractDistinctId({ distinct_id: '' })).toBeNull();
    expect(extractDistinctId({})).toBeNull();
  });
});
