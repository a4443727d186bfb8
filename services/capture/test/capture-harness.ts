import { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { PartitionCounts, createKafka, createProducer, decodeMessageEvents, ensureTopics, topicNames, type CaptureMessage, type TopicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, type Pool } from '@tributary/postgres';
import { createRedis, type Redis } from '@tributary/redis';
import { createTestTenant, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import type { Config } from '@tributary/config';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { captureRoutes } from '../src/capture-routes.js';
import { EventPublisher } from '../src/event-publisher.js';
import { OverflowDetector } from '../src/overflow-detector.js';

export interface PublishedEvent {
  event: CaptureMessage;
  message: KafkaMessage;
  partition: number;
}

/** Capture in-process on a free port, publishing to real topics under a unique prefix. */
export interface CaptureHarness {
  url: string;
  tenant: TestTenant;
  topics: TopicNames;
  kafka: Kafka;
  /** Every event on a topic so far, each with the Kafka message that carried it, read by a fresh consumer group. */
  readEvents: (topic: string, atLeast: number) => Promise<PublishedEvent[]>;
  close: () => Promise<void>;
}

export async function startCapture(overrides: Partial<Config> = {}, brokers?: string[]): Promise<CaptureHarness> {
  const config = testConfig(overrides);
  const logger = createLogger('capture-test', config.logLevel);
  const prefix = `${uniqueName('c')}_`;
  const topics = topicNames(prefix);
  const pool: Pool = createPool(config, { max: 2 });
  const redis: Redis = createRedis(config);
  const kafka = createKafka(config, logger, 'capture-test');
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 2);
  await admin.disconnect();
  const publishKafka = brokers ? createKafka({ ...config, kafkaBrokers: brokers }, logger, 'capture-test-dead') : kafka;
  const producer = createProducer(publishKafka);
  const publishAdmin = publishKafka.admin();
  if (!brokers) await Promise.all([producer.connect(), publishAdmin.connect()]);
  const tenant = await createTestTenant(pool, config);
  const runtime: ServiceRuntime = await startServiceRuntime(
    {
      name: 'capture-test',
      logger,
      host: '127.0.0.1',
      port: 0,
      shutdownTimeoutMs: 1000,
      direct: captureRoutes({
        tokens: new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis),
        publisher: new EventPublisher(
          [producer],
          topics,
          new PartitionCounts(publishAdmin, [topics.realtime, topics.historical, topics.overflow]),
          new OverflowDetector(redis, config.captureOverflowEventsPerSecond),
          config.kafkaProduceTimeoutMs,
        ),
        logger,
        maxBatchBytes: config.captureMaxBatchBytes,
        maxEventBytes: config.captureMaxEventBytes,
      }),
      dependencies: {},
      stop: async () => {
        await Promise.all([producer.disconnect(), publishAdmin.disconnect()]).catch(() => undefined);
        await pool.end();
        redis.disconnect();
      },
    },
    false,
  );
  return {
    url: `http://127.0.0.1:${runtime.port}`,
    tenant,
    topics,
    kafka,
    async readEvents(topic, atLeast) {
      const events: PublishedEvent[] = [];
      const consumer = kafka.consumer({ groupId: uniqueName('reader') });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message, partition }) => {
          for (const { decoded } of decodeMessageEvents(message)) {
            if (!decoded.ok) throw new Error(`capture published an unreadable event: ${decoded.reason}`);
            events.push({ event: decoded.message, message, partition });
          }
        },
      });
      try {
        await waitFor(async () => events.length >= atLeast, { what: `${atLeast} events on ${topic}`, timeoutMs: 30_000 });
      } finally {
        await consumer.disconnect();
      }
      return events;
    },
    close: () => runtime.shutdown('test finished'),
  };
}
