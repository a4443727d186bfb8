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

  it('records the uuid and normalised distinct id in the event data for ingest', () => {
    const [event] = ok({ api_key: 'phc_a', event: 'e', distinct_id: 12345, $set: { a: 1 } }).events;
    expect(JSON.parse(event!.data)).toMatchObject({ distinct_id: '12345', uuid: event!.uuid, $set: { a: 1 } });
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
