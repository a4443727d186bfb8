import type { TopicMessages } from 'kafkajs';
import { jest } from '@jest/globals';
import { GroupCommit, mergeTopicMessages, sizeOfTopicMessages, type GroupCommitOptions } from './group-commit.js';

const part = (topic: string, ...values: string[]): TopicMessages[] => [{ topic, messages: values.map((value) => ({ key: null, value })) }];

/** A send that stays pending until the test settles it, recording what it was given. */
function controlledSend() {
  const calls: { batch: TopicMessages[]; settle: (error?: Error) => void }[] = [];
  const send = (batch: TopicMessages[]) =>
    new Promise<void>((resolve, reject) => calls.push({ batch, settle: (error) => (error ? reject(error) : resolve()) }));
  return { calls, send };
}

/** A GroupCommit of TopicMessages over a controlled send, merging its parts per topic. */
function controlledCommit(options?: GroupCommitOptions) {
  const { calls, send } = controlledSend();
  const commit = new GroupCommit<TopicMessages[]>((parts) => send(mergeTopicMessages(parts)), sizeOfTopicMessages, options);
  return { calls, commit };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** With fake timers: one item sent and acknowledged, so that the next send has the interval to wait out. */
async function sendOne(commit: GroupCommit<TopicMessages[]>, calls: ReturnType<typeof controlledSend>['calls']): Promise<void> {
  const first = commit.submit(part('t', '1'));
  await jest.advanceTimersByTimeAsync(0);
  calls[calls.length - 1]!.settle();
  await first;
}

describe('mergeTopicMessages', () => {
  it('joins parts per topic in arrival order', () => {
    expect(mergeTopicMessages([part('a', '1', '2'), [...part('b', 'x'), ...part('a', '3')]])).toEqual([
      { topic: 'a', messages: [{ key: null, value: '1' }, { key: null, value: '2' }, { key: null, value: '3' }] },
      { topic: 'b', messages: [{ key: null, value: 'x' }] },
    ]);
  });
});

describe('GroupCommit', () => {
  it('sends the first submission at once and groups what arrives while it is in flight', async () => {
    const { calls, commit } = controlledCommit();
    const first = commit.submit(part('t', '1'));
    const second = commit.submit(part('t', '2'));
    const third = commit.submit(part('t', '3'));
    await flush();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.batch[0]!.messages.map((m) => m.value)).toEqual(['1']);
    calls[0]!.settle();
    await first;
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.batch[0]!.messages.map((m) => m.value)).toEqual(['2', '3']);
    calls[1]!.settle();
    await expect(Promise.all([second, third])).resolves.toEqual([undefined, undefined]);
  });

  it('fails every caller whose messages were in a failed send, and only those', async () => {
    const { calls, commit } = controlledCommit();
    const first = commit.submit(part('t', '1'));
    const second = commit.submit(part('t', '2'));
    await flush();
    calls[0]!.settle(new Error('broker away'));
    await expect(first).rejects.toThrow('broker away');
    await flush();
    calls[1]!.settle();
    await expect(second).resolves.toBeUndefined();
  });

  it('keeps a send under the size cap, but always carries at least one submission', async () => {
    const { calls, commit } = controlledCommit({ maxSendBytes: 10 });
    const big = commit.submit(part('t', 'x'.repeat(50)));
    const a = commit.submit(part('t', 'aaaa'));
    const b = commit.submit(part('t', 'bbbb'));
    const c = commit.submit(part('t', 'cccc'));
    await flush();
    calls[0]!.settle();
    await big;
    await flush();
    expect(calls[1]!.batch[0]!.messages.map((m) => m.value)).toEqual(['aaaa', 'bbbb']);
    calls[1]!.settle();
    await flush();
    expect(calls[2]!.batch[0]!.messages.map((m) => m.value)).toEqual(['cccc']);
    calls[2]!.settle();
    await Promise.all([a, b, c]);
  });

  describe('with a least interval between sends', () => {
    beforeEach(() => jest.useFakeTimers({ now: 0 }));
    afterEach(() => jest.useRealTimers());

    it('waits it out and sends what arrived meanwhile together', async () => {
      const { calls, commit } = controlledCommit({ maxSendBytes: 1024, minIntervalMs: 1_000 });
      await sendOne(commit, calls);
      const later = [commit.submit(part('t', '2')), commit.submit(part('t', '3'))];
      await jest.advanceTimersByTimeAsync(999);
      expect(calls).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.batch[0]!.messages.map((m) => m.value)).toEqual(['2', '3']);
      calls[1]!.settle();
      await expect(Promise.all(later)).resolves.toEqual([undefined, undefined]);
    });

    it('sends at once, without waiting out the interval, when what waits fills a send', async () => {
      const { calls, commit } = controlledCommit({ maxSendBytes: 10, minIntervalMs: 1_000 });
      await sendOne(commit, calls);
      const small = commit.submit(part('t', 'aaaa'));
      await jest.advanceTimersByTimeAsync(100);
      expect(calls).toHaveLength(1);
      const filling = [commit.submit(part('t', 'bbbb')), commit.submit(part('t', 'cc'))];
      await jest.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.batch[0]!.messages.map((m) => m.value)).toEqual(['aaaa', 'bbbb', 'cc']);
      calls[1]!.settle();
      await expect(Promise.all([small, ...filling])).resolves.toEqual([undefined, undefined, undefined]);
    });
    it('once told nothing more is coming, sends what waits after the quiet interval rather than the whole one', async () => {
      const { calls, commit } = controlledCommit({ maxSendBytes: 1024, minIntervalMs: 2_000, quietIntervalMs: 250 });
      await sendOne(commit, calls);
      const waiting = commit.submit(part('t', '2'));
      await jest.advanceTimersByTimeAsync(100);
      commit.quiet();
      await jest.advanceTimersByTimeAsync(149);
      expect(calls).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(2);
      calls[1]!.settle();
      await waiting;
      // Told once the quiet interval is already over, it sends at once.
      const late = commit.submit(part('t', '3'));
      await jest.advanceTimersByTimeAsync(300);
      expect(calls).toHaveLength(2);
      commit.quiet();
      await jest.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(3);
      calls[2]!.settle();
      await late;
    });

    it('waits out the whole interval again once something is submitted after it was told to be quiet', async () => {
      const { calls, commit } = controlledCommit({ maxSendBytes: 1024, minIntervalMs: 2_000, quietIntervalMs: 250 });
      await sendOne(commit, calls);
      commit.quiet();
      const later = commit.submit(part('t', '2'));
      await jest.advanceTimersByTimeAsync(1_999);
      expect(calls).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(2);
      calls[1]!.settle();
      await later;
    });

    it('waits out the interval only while what waits is small, and sends larger items at once, all of them together', async () => {
      const { calls, commit } = controlledCommit({ maxSendBytes: 1024, minIntervalMs: 1_000, waitOnlyUnderBytes: 6 });
      await sendOne(commit, calls);
      const small = commit.submit(part('t', 'aa'));
      await jest.advanceTimersByTimeAsync(100);
      expect(calls).toHaveLength(1);
      const large = commit.submit(part('t', 'bbbb'));
      await jest.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(2);
      expect(calls[1]!.batch[0]!.messages.map((m) => m.value)).toEqual(['aa', 'bbbb']);
      calls[1]!.settle();
      await expect(Promise.all([small, large])).resolves.toEqual([undefined, undefined]);
      // An item as large as the threshold does not wait at all, though the interval has not passed.
      const alone = commit.submit(part('t', 'cccccc'));
      await jest.advanceTimersByTimeAsync(0);
      expect(calls).toHaveLength(3);
      calls[2]!.settle();
      await alone;
    });
  });
});
