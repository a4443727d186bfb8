import { detectPropertyType, fitsDefinition, isPropertyObject, isSkippedEventProperty, linksToEvent, storableName } from './index.js';

const nowS = Date.parse('2026-06-01T12:00:00Z') / 1000;
const typeOf = (key: string, value: unknown) => detectPropertyType(key, value, nowS);

describe('property type inference, as PostHog infers it', () => {
  it.each([
    ['price', 9.99, 'Numeric'],
    ['count', 3, 'Numeric'],
    ['is_admin', true, 'Boolean'],
    ['opted_in', 'true', 'Boolean'],
    ['opted_in', ' FALSE ', 'Boolean'],
    ['plan', 'pro', 'String'],
    ['plan', '12', 'String'],
    ['signup', '2026-05-01T10:00:00Z', 'DateTime'],
    ['signup', '2026-05-01T10:00:00.123+02:00', 'DateTime'],
    ['signup', '2026-05-01', 'DateTime'],
    ['signup', '05/01/2026 10:00:00', 'DateTime'],
    ['signup', 'Fri, 01 May 2026 10:00:00 GMT', 'DateTime'],
  ])('%s = %j is %s', (key, value, type) => {
    expect(typeOf(key, value)).toBe(type);
  });

  it('reads a recent whole number as a Unix time only when the key names a time', () => {
    expect(typeOf('created_at', nowS - 60)).toBe('DateTime');
    expect(typeOf('lastLoginTime', nowS)).toBe('DateTime');
    expect(typeOf('revenue', nowS)).toBe('Numeric');
    // Older than six months, a fraction, or negative: a number like any other.
    expect(typeOf('created_at', nowS - 200 * 86_400)).toBe('Numeric');
    expect(typeOf('created_at', nowS + 0.5)).toBe('Numeric');
    expect(typeOf('updated_at', 5)).toBe('Numeric');
  });

  it('keeps a time-named key that holds no date as what its value is', () => {
    expect(typeOf('timezone', 'Europe/Paris')).toBe('String');
    expect(typeOf('date_format', 'true')).toBe('Boolean');
  });

  it('always calls utm codes, flag values and survey answers String, whatever the first value looks like', () => {
    expect(typeOf('utm_campaign', 2024)).toBe('String');
    expect(typeOf('$initial_utm_source', 1)).toBe('String');
    expect(typeOf('$feature/new-checkout', true)).toBe('String');
    expect(typeOf('$feature_flag_response', false)).toBe('String');
    expect(typeOf('$survey_response_2', 5)).toBe('String');
    expect(typeOf('UTM_Medium', 3)).toBe('String');
  });

  it('infers nothing from null, lists, objects or non-finite numbers', () => {
    expect(typeOf('a', null)).toBeNull();
    expect(typeOf('a', [1])).toBeNull();
    expect(typeOf('a', { b: 1 })).toBeNull();
    expect(typeOf('a', Number.NaN)).toBeNull();
  });
});

describe('what an event defines', () => {
  it('reads person and group property updates only from objects', () => {
    expect(isPropertyObject({ plan: 'pro' })).toBe(true);
    for (const value of [null, ['plan'], 'plan', 1]) expect(isPropertyObject(value)).toBe(false);
  });

  it('leaves out update and group keys, and long names', () => {
    for (const key of ['$set', '$set_once', '$unset', '$groups', '$group_0', '$group_4']) expect(isSkippedEventProperty(key)).toBe(true);
    expect(isSkippedEventProperty('$current_url')).toBe(false);
    expect(fitsDefinition('x'.repeat(200))).toBe(true);
    expect(fitsDefinition('x'.repeat(201))).toBe(false);
  });

  it('does not link flag properties to the events they were seen on', () => {
    expect(linksToEvent('$feature/checkout')).toBe(false);
    expect(linksToEvent('$feature_enrollment/beta')).toBe(false);
    expect(linksToEvent('$browser')).toBe(true);
  });

  it('stores NUL as U+FFFD, as Postgres text cannot hold it', () => {
    expect(storableName('a\u0000b')).toBe('a\uFFFDb');
  });
});
