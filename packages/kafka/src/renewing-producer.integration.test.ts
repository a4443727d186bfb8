import net from 'node:net';
import { Kafka, logLevel, type Admin, type Producer, type RecordMetadata } from 'kafkajs';
import { AnswerDroppingRelay, testConfig, uniqueName, waitFor } from '@tributary/test-support';
import { createProducer } from './client.js';

/**
 * Every broker behind a relay of its own that can lose the broker's answers: the client connects
 * only through them (on a cluster the partitions' leaders and the group coordinator are spread over
 * the brokers), and `losingAnswers` drops every broker's answers at once.
 */
const relays = new Map<number, AnswerDroppingRelay>();
const relayPorts = new Map<number, number>();
const relay = {
  set losingAnswers(losing: boolean) {
    for (const r of relays.values()) r.losingAnswers = losing;
  },
};
let kafka: Kafka;
let admin: Admin;

beforeAll(async () => {
  const brokers = testConfig().kafkaBrokers;
  const direct = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
  await direct.connect();
  const { brokers: members } = await direct.describeCluster();
  await direct.disconnect();
  for (const member of members) {
    const r = new AnswerDroppingRelay(member.host, member.port);
    relays.set(member.port, r);
    relayPorts.set(member.port, await r.listen());
  }
  kafka = new Kafka({
    brokers,
    logLevel: logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 300 },
    connectionTimeout: 2_000,
    requestTimeout: 5_000,
    socketFactory: ({ port, onConnect }) => net.connect({ host: '127.0.0.1', port: relayPorts.get(port)! }, onConnect),
  });
  admin = kafka.admin();
  await admin.connect();
});

afterAll(async () => {
  await admin.disconnect();
  await Promise.all([...relays.values()].map((r) => r.close()));
});

type Sender = Pick<Producer, 'sendBatch'>;

/**
 * A topic of one partition, ready once its leader answers for it. On a cluster the other brokers
 * learn of a new topic a moment later, and a client asking one of them then is told it does not
 * exist: the topic counts as ready after a settling second there.
 */
async function newTopic(): Promise<string> {
  const topic = uniqueName('renewing');
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: false });
  await waitFor(() => admin.fetchTopicOffsets(topic).then(() => true, () => false), { what: `a leader for ${topic}` });
  if (relays.size > 1) await new Promise((resolve) => setTimeout(resolve, 1_000));
  return topic;
}

async function send(producer: Sender, topic: string, value: string): Promise<RecordMetadata> {
  const [acknowledged] = await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: [{ partition: 0, value }] }] });
  return acknowledged!;
}

/** Sends a, then b while the broker's answers are dropped, then c: what Kafka acknowledged for c. */
async function sendAcrossLostAnswer(producer: Sender, topic: string): Promise<RecordMetadata> {
  await send(producer, topic, 'a');
  relay.losingAnswers = true;
  await expect(send(producer, topic, 'b')).rejects.toThrow();
  relay.losingAnswers = false;
  return send(producer, topic, 'c');
}

async function valuesIn(topic: string): Promise<string[]> {
  const [partition] = await admin.fetchTopicOffsets(topic);
  const high = partition!.high;
  const consumer = kafka.consumer({ groupId: uniqueName('renewing-reader') });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        values.push(String(message.value));
        if (BigInt(message.offset) + 1n >= BigInt(high)) resolve();
      },
    });
  });
  await consumer.disconnect();
  return values;
}

describe('an acknowledged send after a failed one', () => {
  it('is lost by a bare kafkajs idempotent producer: the broker takes it for a retry of the batch whose answer was lost', async () => {
    const topic = await newTopic();
    const bare = kafka.producer({ idempotent: true, maxInFlightRequests: 5 });
    await bare.connect();
    try {
      const c = await sendAcrossLostAnswer(bare, topic);
      expect(c.baseOffset).toBe('1');
      expect(await valuesIn(topic)).toEqual(['a', 'b']);
    } finally {
      await bare.disconnect();
    }
  });

  it('is written by the producer Tributary creates, at the offset Kafka acknowledged', async () => {
    const topic = await newTopic();
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      const c = await sendAcrossLostAnswer(producer, topic);
      const d = await send(producer, topic, 'd');
      const values = await valuesIn(topic);
      expect(values).toEqual(['a', 'b', 'c', 'd']);
      expect([values[Number(c.baseOffset)], values[Number(d.baseOffset)]]).toEqual(['c', 'd']);
    } finally {
      await producer.disconnect();
    }
  });
});

describe('a send to a partition added since the producer last read metadata', () => {
  it('fails rather than being acknowledged without the messages for it (kafkajs leaves them out), and the next send writes them', async () => {
    const topic = await newTopic();
    const producer = createProducer(kafka);
    await producer.connect();
    try {
      await send(producer, topic, 'a');
      await admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] });
      const toBoth = () => producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages: [{ partition: 1, value: 'b' }, { partition: 0, value: 'c' }] }] });
      await expect(toBoth()).rejects.toThrow(`Kafka did not acknowledge the messages for ${topic}/1`);
      await waitFor(() => admin.fetchTopicOffsets(topic).then((offsets) => offsets.length === 2, () => false), { what: `a leader for ${topic}/1` });
      if (relays.size > 1) await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect((await toBoth()).map(({ partition }) => partition).sort()).toEqual([0, 1]);
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets.map(({ partition, high }) => [partition, high]).sort()).toEqual([[0, '3'], [1, '1']]);
    } finally {
      await producer.disconnect();
    }
  });
});
