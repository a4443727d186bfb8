import { memoisedByAddress } from './memoised-by-address.js';

describe('memoisedByAddress', () => {
  it('looks each address up once and hands back the same answer', () => {
    const asked: (string | undefined | null)[] = [];
    const lookup = memoisedByAddress((ip) => {
      asked.push(ip);
      return { $geoip_country_code: ip === '81.2.69.160' ? 'GB' : 'US' };
    });
    const first = lookup('81.2.69.160');
    expect(lookup('81.2.69.160')).toBe(first);
    expect(lookup('216.160.83.56')).toEqual({ $geoip_country_code: 'US' });
    expect(asked).toEqual(['81.2.69.160', '216.160.83.56']);
  });

  it('asks every time when there is no address', () => {
    let calls = 0;
    const lookup = memoisedByAddress(() => ++calls);
    lookup(undefined);
    lookup(undefined);
    lookup(null);
    expect(calls).toBe(3);
  });
});
