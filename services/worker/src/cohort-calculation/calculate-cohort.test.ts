import { inBatches } from './calculate-cohort.js';

async function* chunks<T>(...parts: T[][]): AsyncIterable<T[]> {
  for (const part of parts) yield part;
}
async function collect<T>(source: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const batch of source) out.push(batch);
  return out;
}

describe('a cohort’s members written in batches', () => {
  it('regroups chunks of any size into batches of at most the size, in order, the last one short', async () => {
    expect(await collect(inBatches(chunks([1, 2, 3], [], [4], [5, 6, 7, 8, 9]), 4))).toEqual([[1, 2, 3, 4], [5, 6, 7, 8], [9]]);
    expect(await collect(inBatches(chunks<number>(), 4))).toEqual([]);
  });

  it('hands a batch over as soon as it is full, before the source has ended', async () => {
    let ended = false;
    async function* endless(): AsyncIterable<number[]> {
      yield [1, 2];
      yield [3];
      ended = true;
    }
    const batches = inBatches(endless(), 2)[Symbol.asyncIterator]();
    expect((await batches.next()).value).toEqual([1, 2]);
    expect(ended).toBe(false);
  });
});
