import { HttpError } from '@tributary/http';
import { readCohortCsv } from './cohort-csv.js';

const read = (text: string) => readCohortCsv(Buffer.from(text));

describe("a static cohort's CSV, read as PostHog reads it", () => {
  it('reads one column without a header as distinct ids, the first row included', () => {
    expect(read('user-1\nuser-2\n\nuser-1\n')).toEqual({ kind: 'distinct_id', ids: ['user-1', 'user-2'] });
  });

  it('reads one column headed person_id or email as person uuids or emails, skipping the header', () => {
    expect(read('person_id\n0190c7a4-0000-7000-8000-000000000001\n')).toEqual({ kind: 'person_id', ids: ['0190c7a4-0000-7000-8000-000000000001'] });
    expect(read('\uFEFFEmail\r\na@x.test\r\n')).toEqual({ kind: 'email', ids: ['a@x.test'] });
    expect(read('distinct_id\nd1\n')).toEqual({ kind: 'distinct_id', ids: ['d1'] });
  });

  it('picks the id column of a wider file: person_id before distinct_id before email', () => {
    expect(read('name,email,distinct_id\nAda,a@x.test,d1\nBob,b@x.test,"d,2"\nshort\n')).toEqual({ kind: 'distinct_id', ids: ['d1', 'd,2'] });
    expect(read('email,Person .id\na@x.test,u1\n')).toEqual({ kind: 'person_id', ids: ['u1'] });
  });

  it('refuses an empty file, a wide file without an id column, a file of no usable ids, and unreadable CSV, naming csv', () => {
    for (const text of ['', '\n\n', 'name,plan\nAda,pro\n', 'email\n\n', 'a\u0000b\n', '"open\n']) {
      let caught: unknown;
      try {
        read(text);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(HttpError);
      expect(caught).toMatchObject({ status: 400, attr: 'csv' });
    }
  });
});
