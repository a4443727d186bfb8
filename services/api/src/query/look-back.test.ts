import { lookBackBounds, readNewestFirst } from './look-back.js';

const end = new Date('2025-06-30T12:00:00Z');
const daysBefore = (days: number) => new Date(end.getTime() - days * 86_400_000);

describe('lookBackBounds', () => {
  it('reaches back an hour, a day, a week, a month and a year before the whole range', () => {
    expect(lookBackBounds(end, undefined)).toEqual([daysBefore(1 / 24), daysBefore(1), daysBefore(7), daysBefore(30), daysBefore(365), undefined]);
  });

  it('leaves out the windows that reach back to the range’s own start or past it', () => {
    expect(lookBackBounds(end, daysBefore(20))).toEqual([daysBefore(1 / 24), daysBefore(1), daysBefore(7), undefined]);
    expect(lookBackBounds(end, daysBefore(7))).toEqual([daysBefore(1 / 24), daysBefore(1), undefined]);
    expect(lookBackBounds(end, daysBefore(0.5))).toEqual([daysBefore(1 / 24), undefined]);
    expect(lookBackBounds(end, daysBefore(1 / 48))).toEqual([undefined]);
  });
});

describe('readNewestFirst', () => {
  /** A reader of rows `stamps` days old, which notes the bound of each read. */
  const reader = (stamps: number[]) => {
    const calls: (Date | undefined)[] = [];
    const read = async (from: Date | undefined) => {
      calls.push(from);
      return stamps.filter((days) => from === undefined || daysBefore(days) > from);
    };
    return { read, calls };
  };

  it('answers from the first window holding more rows than the page takes, reading no wider', async () => {
    const { read, calls } = reader([0.01, 0.02, 3, 40]);
    expect(await readNewestFirst(end, undefined, (rows) => rows.length > 1, read)).toEqual([0.01, 0.02]);
    expect(calls).toEqual([daysBefore(1 / 24)]);
  });

  it('widens step by step, and reads the whole range when no window fills the page', async () => {
    const { read, calls } = reader([3, 400]);
    expect(await readNewestFirst(end, undefined, (rows) => rows.length > 2, read)).toEqual([3, 400]);
    expect(calls).toEqual([daysBefore(1 / 24), daysBefore(1), daysBefore(7), daysBefore(30), daysBefore(365), undefined]);
  });

  it('a window holding exactly the page is not enough: the row after it decides whether there is a next page', async () => {
    const { read, calls } = reader([0.1, 0.2, 3]);
    expect(await readNewestFirst(end, undefined, (rows) => rows.length > 2, read)).toEqual([0.1, 0.2, 3]);
    expect(calls).toEqual([daysBefore(1 / 24), daysBefore(1), daysBefore(7)]);
  });
});
