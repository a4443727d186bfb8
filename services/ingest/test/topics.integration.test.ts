import { createKafka, ensureTopics, topicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { testConfig, uniqueName } from '@tributary/test-support';

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
    // It returns once every broker shows the new count, so any broker asked now answers 4.
    const grown = await admin.fetchTopicMetadata({ topics: names });
    expect(grown.topics.map((t) => t.partitions.length)).toEqual([4, 4, 4, 4]);
    await ensureTopics(admin, prefix, 3);
    const again = await admin.fetchTopicMetadata({ topics: names });
    expect(again.topics.map((t) => t.partitions.length)).toEqual([4, 4, 4, 4]);
  });
});
