import { PREFIX_PATTERN, pythonIsoformat, renderPrefix, s3Key } from './s3-key.js';

const window = { start: new Date('2024-03-05T06:00:00Z'), end: new Date('2024-03-05T07:00:00Z'), by: 'inserted_at' as const };
const key = (overrides: Partial<Parameters<typeof s3Key>[0]> = {}) =>
  s3Key({ prefix: 'exports', model: 'events', window, part: 0, file: 0, fileFormat: 'JSONLines', compression: null, ...overrides });

describe('S3 keys', () => {
  it('write interval bounds as Python isoformat, as PostHog names its files', () => {
    expect(pythonIsoformat(new Date('2024-03-05T06:00:00Z'))).toBe('2024-03-05T06:00:00+00:00');
    expect(pythonIsoformat(new Date('2024-03-05T06:00:00.25Z'))).toBe('2024-03-05T06:00:00.250000+00:00');
  });

  it('name the window, the part and the file, with the format and compression extensions', () => {
    expect(key()).toBe('exports/2024-03-05T06:00:00+00:00-2024-03-05T07:00:00+00:00-0-0.jsonl');
    expect(key({ part: 3, file: 2, compression: 'gzip' })).toBe('exports/2024-03-05T06:00:00+00:00-2024-03-05T07:00:00+00:00-3-2.jsonl.gz');
    expect(key({ fileFormat: 'Parquet', compression: 'brotli' })).toMatch(/-0-0\.parquet\.br$/);
  });

  it('are the same for the same window, part and file, so a rewrite overwrites', () => {
    expect(key({ part: 1, file: 1 })).toBe(key({ part: 1, file: 1 }));
    expect(new Set([key({ part: 0, file: 1 }), key({ part: 1, file: 0 }), key({ part: 1, file: 1 })]).size).toBe(3);
  });

  it("of a backfill differ from the scheduled run's of the same window, so neither overwrites the other's events", () => {
    const backfill = key({ window: { ...window, by: 'timestamp' } });
    expect(backfill).toBe('exports/2024-03-05T06:00:00+00:00-2024-03-05T07:00:00+00:00-backfill-0-0.jsonl');
    expect(backfill).not.toBe(key());
    expect(key({ window: { ...window, by: 'timestamp' } })).toBe(backfill);
  });

  it('join the prefix with one slash and never start with one', () => {
    expect(key({ prefix: '' })).toMatch(/^2024-03-05T06/);
    expect(key({ prefix: 'a/b/' })).toMatch(/^a\/b\/2024/);
    expect(key({ prefix: '/a/b' })).toMatch(/^a\/b\/2024/);
  });

  it('render the prefix template from the end of the window, as PostHog does', () => {
    expect(renderPrefix('{table}/{year}/{month}/{day}/{hour}:{minute}:{second}', 'persons', window)).toBe('persons/2024/03/05/07:00:00');
    expect(renderPrefix('{data_interval_start}_{data_interval_end}', 'events', window)).toBe('2024-03-05T06:00:00+00:00_2024-03-05T07:00:00+00:00');
    expect(renderPrefix('literal-{{braces}}', 'events', window)).toBe('literal-{braces}');
    expect(() => renderPrefix('{week}', 'events', window)).toThrow(/\{week\}/);
  });

  it('accept as a prefix template only the variables PostHog knows', () => {
    const valid = (prefix: string) => new RegExp(PREFIX_PATTERN).test(prefix);
    expect(valid('posthog/{table}/{year}-{month}-{day}')).toBe(true);
    expect(valid('')).toBe(true);
    expect(valid('a{{b}}')).toBe(true);
    expect(valid('{week}')).toBe(false);
    expect(valid('{year')).toBe(false);
  });
});
