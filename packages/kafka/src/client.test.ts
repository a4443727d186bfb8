import type { Admin } from 'kafkajs';
import { ensureTopics } from './client.js';
import { TOPIC_KINDS, topicNames } from './topics.js';

/** An admin whose broker has just created the topics: metadata first answers as a settling broker does. */
function settlingAdmin(answers: ('unknown' | 'leaderless' | 'ready')[]) {
  const asked: string[][] = [];
  const admin = {
    listTopics: async () => [],
    createTopics: async () => true,
    describeCluster: async () => ({ brokers: [{ nodeId: 1 }] }),
    fetchTopicOffsets: async () => [{ partition: 0, offset: '0', high: '0', low: '0' }],
    fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
      asked.push(topics);
      const answer = answers.shift() ?? 'ready';
      if (answer === 'unknown') throw Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION' });
      const leader = answer === 'ready' ? 1 : -1;
      return { topics: topics.map((name) => ({ name, partitions: [{ partitionId: 0, leader, replicas: [1], isr: [1], partitionErrorCode: 0 }] })) };
    },
  };
  return { admin: admin as unknown as Admin, asked };
}

describe('ensureTopics', () => {
  it('waits through a new topic being unknown and then leaderless until every partition has a leader', async () => {
    const { admin, asked } = settlingAdmin(['unknown', 'leaderless', 'ready']);
    const created = await ensureTopics(admin, 't_', 1);
    expect(created.sort()).toEqual(TOPIC_KINDS.map((kind) => topicNames('t_')[kind]).sort());
    expect(asked).toHaveLength(3);
  });

  it('on a cluster, waits until as many answers in a row as there are brokers show the topics served', async () => {
    const { admin, asked } = settlingAdmin(['ready', 'unknown', 'ready', 'ready', 'ready']);
    Object.assign(admin, { describeCluster: async () => ({ brokers: [{ nodeId: 1 }, { nodeId: 2 }, { nodeId: 3 }] }) });
    await ensureTopics(admin, 't_', 1);
    expect(asked).toHaveLength(5);
  });

  it('waits while a leader does not yet answer for its partitions', async () => {
    const { admin, asked } = settlingAdmin([]);
    let refusals = 2;
    Object.assign(admin, {
      fetchTopicOffsets: async () => {
        if (refusals-- > 0) throw Object.assign(new Error('This server is not the leader for that topic-partition'), { type: 'NOT_LEADER_FOR_PARTITION' });
        return [{ partition: 0, offset: '0', high: '0', low: '0' }];
      },
    });
    await ensureTopics(admin, 't_', 1);
    expect(asked).toHaveLength(3);
  });

  it('reads the partition counts again when a broker behind the others refuses the new count', async () => {
    const counts = [2, 2, 4];
    let growths = 0;
    const admin = {
      listTopics: async () => TOPIC_KINDS.map((kind) => topicNames('t_')[kind]),
      fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
        const count = counts.shift() ?? 4;
        return { topics: topics.map((name) => ({ name, partitions: Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 1 })) })) };
      },
      createPartitions: async () => {
        growths += 1;
        throw Object.assign(new Error('Number of partitions is invalid'), { type: 'INVALID_PARTITIONS' });
      },
    };
    expect(await ensureTopics(admin as unknown as Admin, 't_', 4)).toEqual([]);
    expect(growths).toBe(2);
  });

  it('after growing the topics, waits until each broker in turn shows the new count', async () => {
    // Read before growing, then three brokers, the second of which has not heard of the growth yet.
    const counts = [2, 4, 2, 4, 4, 4];
    const asked: number[] = [];
    const admin = {
      listTopics: async () => TOPIC_KINDS.map((kind) => topicNames('t_')[kind]),
      describeCluster: async () => ({ brokers: [{ nodeId: 1 }, { nodeId: 2 }, { nodeId: 3 }] }),
      fetchTopicOffsets: async () => [{ partition: 0, offset: '0', high: '0', low: '0' }],
      fetchTopicMetadata: async ({ topics }: { topics: string[] }) => {
        const count = counts.shift() ?? 4;
        asked.push(count);
        return { topics: topics.map((name) => ({ name, partitions: Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: 1 })) })) };
      },
      createPartitions: async () => true,
    };
    expect(await ensureTopics(admin as unknown as Admin, 't_', 4)).toEqual([]);
    expect(asked).toEqual([2, 4, 2, 4, 4, 4]);
  });

  it('passes on an error that is not a topic settling', async () => {
    const admin = { listTopics: async () => [], createTopics: async () => true, describeCluster: async () => ({ brokers: [] }), fetchTopicMetadata: async () => Promise.reject(new Error('broker gone')) };
    await expect(ensureTopics(admin as unknown as Admin, 't_', 1)).rejects.toThrow('broker gone');
  });
});
