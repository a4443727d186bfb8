import type { CaptureMessage } from '@tributary/kafka';
import { parseEvent } from './parse-event.js';
import { parseStorableJson, storableText } from './storable-text.js';

const message = (data: string, distinctId = 'd'): CaptureMessage => ({
  uuid: 'u',
  distinct_id: distinctId,
  ip: null,
  data,
  now: '2024-01-01T00:00:00Z',
  sent_at: null,
  token: 't',
  historical_migration: false,
});

describe('text every store takes', () => {
  it('replaces NUL and lone surrogates with U+FFFD and keeps paired surrogates', () => {
    expect(storableText('a\u0000b')).toBe('a\ufffdb');
    expect(storableText('\ud800x\udfff')).toBe('\ufffdx\ufffd');
    expect(storableText('\udfff\ud800')).toBe('\ufffd\ufffd');
    expect(storableText('😀 é')).toBe('😀 é');
  });

  it('parses JSON with every string and key made storable, at any depth', () => {
    expect(parseStorableJson('{"\\u0000k":["\\ud800",{"a":"x\\u0000"}],"ok":"\\ud83d\\ude00"}')).toEqual({ '\ufffdk': ['\ufffd', { a: 'x\ufffd' }], ok: '😀' });
    expect(parseStorableJson('{"plain":1}')).toEqual({ plain: 1 });
    // Unescaped: text that was itself inside JSON (a one-event message's data) can hold them raw.
    expect(parseStorableJson('{"a":"x\udc00","\ud800":"\u00e9\ud83d\ude00"}')).toEqual({ a: 'x\ufffd', '\ufffd': 'é😀' });
  });

  it('an event whose name, properties or distinct id hold them is stored, not retried forever (ClickHouse refused a lone surrogate)', () => {
    const parsed = parseEvent(message('{"event":"\\ud800","properties":{"$set":{"email":"a\\u0000b"}}}', 'user\u0000\udc00'));
    expect(parsed).toEqual({ kind: 'ok', event: { event: '\ufffd', distinct_id: 'user\ufffd\ufffd', uuid: 'u', properties: { $set: { email: 'a\ufffdb' } } } });
  });
});
