import { jest } from '@jest/globals';
import type { KafkaMessage } from 'kafkajs';
import { decodeCaptureMessage, decodeMessageEvents, encodeCaptureEvents, encodeCaptureMessage, eventsInMessage, type CaptureMessage } from './capture-message.js';

const message: CaptureMessage = {
  uuid: '0190f3c0-0000-7000-8000-000000000001',
  distinct_id: 'user-1',
  ip: '127.0.0.1',
  data: '{"event":"signed up"}',
  now: '2026-01-01T00:00:00.000Z',
  sent_at: null,
  token: 'phc_abc',
  historical_migration: false,
};

/** Events of one request: they share token, times, address and flag. */
const requestEvents = (count: number, data = (i: number) => JSON.stringify({ event: `e${i}`, distinct_id: `user-${i}`, properties: { i } })): CaptureMessage[] =>
  Array.from({ length: count }, (_, i) => ({ ...message, uuid: `0190f3c0-0000-7000-8000-${String(i).padStart(12, '0')}`, distinct_id: `user-${i}`, data: data(i) }));

const kafkaMessage = (value: string | Buffer | null, offset = '42', key: string | null = null): KafkaMessage => ({
  key: key === null ? null : Buffer.from(key),
  value: value === null ? null : Buffer.from(value),
  offset,
  timestamp: '0',
  attributes: 0,
  headers: {},
});

const decodedEvents = (value: string) => decodeMessageEvents(kafkaMessage(value)).map(({ decoded }) => (decoded.ok ? decoded.message : decoded.reason));

describe('one-event messages', () => {
  it('round-trip through their JSON encoding', () => {
    expect(decodeCaptureMessage(Buffer.from(encodeCaptureMessage(message)))).toEqual({ ok: true, message });
  });

  it('report, rather than throw, a value that is not JSON', () => {
    const result = decodeCaptureMessage(Buffer.from('{nope'));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(/not JSON/);
  });

  it('report a value missing required fields', () => {
    const result = decodeCaptureMessage(JSON.stringify({ ...message, token: undefined }));
    expect(!result.ok && result.reason).toMatch(/token/);
  });

  it('report an empty value', () => {
    expect(decodeCaptureMessage(null)).toEqual({ ok: false, reason: 'empty message value' });
  });

  it('are read as one event that stands for itself, as the api and earlier captures publish them', () => {
    const source = kafkaMessage(encodeCaptureMessage(message), '7', 'phc_abc:user-1');
    const events = decodeMessageEvents(source);
    expect(events).toEqual([{ decoded: { ok: true, message }, message: source }]);
    expect(events[0]!.message).toBe(source);
    expect(eventsInMessage(source.value)).toBe(1);
  });
});

describe('several-event messages', () => {
  it('carry a request’s events in order, every field as it was, data byte for byte', () => {
    // JSON escapes newlines and tabs inside strings, so data may hold them.
    const events = requestEvents(5, (i) => JSON.stringify({ event: 'e', properties: { text: `line\none\ttab "quoted" \\ é 🙂 ${i}` } }));
    events[2] = { ...events[2]!, distinct_id: 'tab\there\nnewline "quoted"' };
    const values = encodeCaptureEvents(events);
    expect(values).toHaveLength(1);
    expect(decodedEvents(values[0]!)).toEqual(events);
    expect(eventsInMessage(Buffer.from(values[0]!))).toBe(5);
  });

  it('carry the event data unescaped, after one line of the fields the events share', () => {
    const [value] = encodeCaptureEvents(requestEvents(2));
    const lines = value!.split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ token: 'phc_abc', now: message.now, sent_at: null, ip: '127.0.0.1', historical_migration: false });
    expect(lines[1]).toBe(`{"uuid":"0190f3c0-0000-7000-8000-000000000000","distinct_id":"user-0"}\t${requestEvents(1)[0]!.data}`);
    expect(lines).toHaveLength(3);
  });

  it('are cut where the next event would pass the size limit; an event larger than the limit travels alone', () => {
    const small = requestEvents(10);
    const lineBytes = Buffer.byteLength(encodeCaptureEvents(small.slice(0, 2))[0]!) - Buffer.byteLength(encodeCaptureEvents(small.slice(0, 1))[0]!);
    const values = encodeCaptureEvents(small, 4 * lineBytes + 200);
    expect(values.length).toBeGreaterThan(2);
    expect(values.every((v) => Buffer.byteLength(v) <= 4 * lineBytes + 200)).toBe(true);
    expect(values.flatMap(decodedEvents)).toEqual(small);

    const huge = { ...small[0]!, data: JSON.stringify({ event: 'big', properties: { pad: 'x'.repeat(5_000) } }) };
    const withHuge = encodeCaptureEvents([small[1]!, huge, small[2]!], 1_000);
    expect(withHuge.map((v) => decodedEvents(v).length)).toEqual([1, 1, 1]);
    expect(withHuge.flatMap(decodedEvents)).toEqual([small[1], huge, small[2]]);
  });

  it('are cut exactly where UTF-8 bytes pass the limit, also when multi-byte text passes it by the 3-bytes-a-unit bound first', () => {
    const texts = ['ascii', 'é'.repeat(40), '中'.repeat(40), '🙂'.repeat(20), 'mixed é中🙂'];
    const events = requestEvents(40, (i) => JSON.stringify({ event: 'e', properties: { text: texts[i % texts.length] } }));
    const lineBytes = events.map((e) => Buffer.byteLength(`${JSON.stringify({ uuid: e.uuid, distinct_id: e.distinct_id })}\t${e.data}`) + 1);
    for (let maxBytes = 100; maxBytes < 8_000; maxBytes += 97) {
      const values = encodeCaptureEvents(events, maxBytes);
      expect(values.flatMap(decodedEvents)).toEqual(events);
      let sent = 0;
      for (const value of values) {
        const count = eventsInMessage(Buffer.from(value));
        sent += count;
        if (count > 1) expect(Buffer.byteLength(value)).toBeLessThanOrEqual(maxBytes);
        if (sent < events.length) expect(Buffer.byteLength(value) + lineBytes[sent]!).toBeGreaterThan(maxBytes);
      }
    }
  });

  it('measure no line of a value that stays far below the limit', () => {
    const byteLength = jest.spyOn(Buffer, 'byteLength');
    try {
      expect(encodeCaptureEvents(requestEvents(100, (i) => JSON.stringify({ event: 'é', properties: { text: '中'.repeat(1_000), i } })))).toHaveLength(1);
      expect(byteLength).not.toHaveBeenCalled();
    } finally {
      byteLength.mockRestore();
    }
  });

  it('start a new value where events do not share token, times, address or flag', () => {
    const [a, b, c] = requestEvents(3);
    const values = encodeCaptureEvents([a!, { ...b!, ip: '10.0.0.1' }, { ...c!, historical_migration: true }]);
    expect(values).toHaveLength(3);
    expect(values.flatMap(decodedEvents)).toEqual([a, { ...b, ip: '10.0.0.1' }, { ...c, historical_migration: true }]);
  });

  it('have each event decoded on its own: a bad line fails alone, and stands as its own message for a dead letter', () => {
    const events = requestEvents(3);
    const [value] = encodeCaptureEvents(events);
    const lines = value!.split('\n');
    lines[2] = '{"uuid":"broken"';
    const decoded = decodeMessageEvents(kafkaMessage(lines.join('\n'), '99'));
    expect(decoded.map((e) => e.decoded.ok)).toEqual([true, false, true]);
    expect(!decoded[1]!.decoded.ok && decoded[1]!.decoded.reason).toMatch(/tab/);

    // Each event's own message: the source's offset, its person's key, the one-event form as value.
    expect(decoded.map((e) => e.message.offset)).toEqual(['99', '99', '99']);
    expect(decoded[0]!.message.key?.toString()).toBe('phc_abc:user-0');
    expect(decodeCaptureMessage(decoded[0]!.message.value)).toEqual({ ok: true, message: events[0] });
    expect(decoded[1]!.message.key).toBeNull();
    expect(decoded[1]!.message.value?.toString()).toBe('{"uuid":"broken"');
  });

  it('reject an event whose own fields are not a uuid and distinct id', () => {
    const [value] = encodeCaptureEvents(requestEvents(1));
    const [shared] = value!.split('\n');
    expect(decodedEvents(`${shared}\n{"uuid":"u"}\t{}`)).toEqual([expect.stringMatching(/distinct_id/)]);
    expect(decodedEvents(`${shared}\n{"uuid":"u", nope\t{}`)).toEqual([expect.stringMatching(/not JSON/)]);
  });

  it('fail as a whole when the shared first line cannot be read, as nothing in them can be trusted', () => {
    const [value] = encodeCaptureEvents(requestEvents(3));
    const lines = value!.split('\n');
    const source = kafkaMessage(['{"token":"phc_abc"}', ...lines.slice(1)].join('\n'));
    const decoded = decodeMessageEvents(source);
    expect(decoded).toHaveLength(1);
    expect(!decoded[0]!.decoded.ok && decoded[0]!.decoded.reason).toMatch(/first line.*now/);
    expect(decoded[0]!.message).toBe(source);
    expect(decodedEvents(['{nope', ...lines.slice(1)].join('\n'))).toEqual([expect.stringMatching(/not JSON/)]);
  });
});
