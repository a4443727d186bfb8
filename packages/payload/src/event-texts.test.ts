import { eventTexts } from './event-texts.js';

describe('eventTexts', () => {
  it('gives the elements of a top-level array', () => {
    expect(eventTexts(' [ {"event":"a"} ,\n{"event":"b"}]\n', 'array', 2)).toEqual(['{"event":"a"}', '{"event":"b"}']);
  });

  it('gives the elements of a batch envelope’s batch, wherever the member is', () => {
    const text = '{"api_key":"phc_a","batch":[{"event":"a"},{"event":"[b]"}],"sent_at":null}';
    expect(eventTexts(text, 'batch', 2)).toEqual(['{"event":"a"}', '{"event":"[b]"}']);
  });

  it('takes the last batch member, as JSON.parse does with duplicate keys', () => {
    const text = '{"batch":[{"event":"first"}],"api_key":"phc_a","batch":[{"event":"last"}]}';
    expect(JSON.parse(text).batch).toEqual([{ event: 'last' }]);
    expect(eventTexts(text, 'batch', 1)).toEqual(['{"event":"last"}']);
  });

  it('knows a batch key by what it decodes to, escapes and all', () => {
    const text = '{"batch":[{"event":"plain"}],"b\\u0061tch":[{"event":"escaped"}],"batch\\u0000":[1, 2],"\\"batch\\"":[]}';
    expect(JSON.parse(text).batch).toEqual([{ event: 'escaped' }]);
    expect(eventTexts(text, 'batch', 1)).toEqual(['{"event":"escaped"}']);
  });

  it('gives a single event whole, without the whitespace around it', () => {
    expect(eventTexts('\r\n {"event":"a", "batch_size": 1}\t ', 'event', 1)).toEqual(['{"event":"a", "batch_size": 1}']);
  });

  it('is null when the text does not agree with the shape or count read from it', () => {
    expect(eventTexts('[{"event":"a"}]', 'array', 2)).toBeNull();
    expect(eventTexts('[{"event":"a"}]', 'event', 1)).toBeNull();
    expect(eventTexts('{"event":"a"}', 'array', 1)).toBeNull();
    expect(eventTexts('{"event":"a"}', 'batch', 1)).toBeNull();
    expect(eventTexts('{"batch":{"event":"a"}}', 'batch', 1)).toBeNull();
    expect(eventTexts('"text"', 'event', 1)).toBeNull();
  });

  it('is null for a byte order mark, which is not JSON whitespace', () => {
    expect(eventTexts('\ufeff{"event":"a"}', 'event', 1)).toBeNull();
  });
});
