import { rowId } from './row-id.js';

describe('rowId', () => {
  it('reads a positive whole number, given as a number or as its digits', () => {
    expect(rowId('42')).toBe(42);
    expect(rowId(42)).toBe(42);
    expect(rowId('007')).toBe(7);
    expect(rowId('999999999')).toBe(999_999_999);
    expect(rowId('999999999999999', 'bigint')).toBe(999_999_999_999_999);
  });

  it('is no id for what no integer column holds: zero, signs, fractions, blanks, exponents, too many digits', () => {
    for (const value of ['0', 0, '-1', -1, '+1', '1.5', 1.5, ' 1', '1e3', '0x1f', '', '1000000000', 1e9, Number.NaN, null, undefined, [1], {}]) {
      expect(rowId(value)).toBeNull();
    }
    expect(rowId('1000000000000000', 'bigint')).toBeNull();
  });
});
