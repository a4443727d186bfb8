import { PartitionCounts } from './partition-counts.js';

/** Answers like kafkajs's admin: each topic with as many partitions as `partitions` says now. */
function admin(partitions: { count: number; fail?: boolean }) {
  const calls = { count: 0 };
  return {
    calls,
    fetchTopicMetadata: async (options?: { topics: string[] }) => {
      calls.count += 1;
      if (partitions.fail) throw new Error('broker unreachable');
      return { topics: (options?.topics ?? []).map((name) => ({ name, partitions: Array.from({ length: partitions.count }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], offlineReplicas: [], partitionErrorCode: 0 })) })) };
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('partition counts', () => {
  it('asks Kafka once, then answers from what it knows until that is older than the limit', async () => {
    let now = 0;
    const state = { count: 8 };
    const kafka = admin(state);
    const counts = new PartitionCounts(kafka, ['a', 'b'], 60_000, () => now);
    expect(await Promise.all([counts.get(), counts.get()])).toEqual([new Map([['a', 8], ['b', 8]]), new Map([['a', 8], ['b', 8]])]);
    now = 59_000;
    await counts.get();
    expect(kafka.calls.count).toBe(1);

    // Grown topics are seen after the limit; the old answer serves the request that noticed.
    state.count = 12;
    now = 61_000;
    expect((await counts.get()).get('a')).toBe(8);
    await settle();
    expect((await counts.get()).get('a')).toBe(12);
    expect(kafka.calls.count).toBe(2);
  });

  it('forgets a failed first answer, so the next request asks again', async () => {
    const state = { count: 4, fail: true };
    const counts = new PartitionCounts(admin(state), ['a']);
    await expect(counts.get()).rejects.toThrow(/unreachable/);
    state.fail = false;
    expect((await counts.get()).get('a')).toBe(4);
  });

  it('keeps what it knows when a refresh fails: partitions are never removed', async () => {
    let now = 0;
    const state = { count: 4, fail: false };
    const counts = new PartitionCounts(admin(state), ['a'], 1_000, () => now);
    await counts.get();
    state.fail = true;
    now = 5_000;
    await counts.get();
    await settle();
    expect((await counts.get()).get('a')).toBe(4);
  });
});
