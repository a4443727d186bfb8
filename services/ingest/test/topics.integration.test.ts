import { createKafka, ensureTopics, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { testConfig, uniqueName, waitFor } from '@tributary/test-support';

const config = testConfig();
const kafka = createKafka(config, createLogger('topics-test', config.logLevel), 'topics-test');
const admin = kafka.admin();

beforeAll(() => admin.connect());
afterAll(() => admin.disconnect());

describe('topics', () => {
  it('creates the four topics, and grows their partitions when more are configured', async () => {
    const prefix = `${uniqueName('topics')}_`;
    const names = Object.values(topicNames(prefix));
    expect((await ensureTopics(admin, prefix, 2)).sort()).toEqual([...names].sort());
    expect(await ensureTopics(admin, prefix, 4)).toEqual([]);
    // The broker answers the partitions' creation before every metadata answer shows them.
    const partitions = async () => (await admin.fetchTopicMetadata({ topics: names })).topics.map((t) => t.partitions.length);
    await waitFor(async () => (await partitions()).every((n) => n === 4), { what: 'the topics to show 4 partitions', timeoutMs: 10_000 });
    await ensureTopics(admin, prefix, 3);
    const again = await admin.fetchTopicMetadata({ topics: names });
    expect(again.topics.map((t) => t.partitions.length)).toEqual([4, 4, 4, 4]);
  });
});
