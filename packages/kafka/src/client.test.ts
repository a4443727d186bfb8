import type { Admin } from 'kafkajs';
import { ensureTopics } from './client.js';
import { TOPIC_KINDS, topicNames } from './topics.js';

/** An admin whose broker has just created the topics: metadata first answers as a settling broker does. */
function settlingAdmin(answers: ('unknown' | 'leaderless' | 'ready')[]) {
  const asked: string[][] = [];
  const admin = {
    listTopics: async () => [],
    createTopics: async () => true,
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

  it('passes on an error that is not a topic settling', async () => {
    const admin = { listTopics: async () => [], createTopics: async () => true, fetchTopicMetadata: async () => Promise.reject(new Error('broker gone')) };
    await expect(ensureTopics(admin as unknown as Admin, 't_', 1)).rejects.toThrow('broker gone');
  });
});
