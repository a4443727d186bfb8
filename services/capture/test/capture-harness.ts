import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createKafka, decodeMessageEvents, ensureTopics, topicNames, type CaptureMessage, type TopicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createTestTenant, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import type { Config } from '@tributary/config';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { buildCapture } from '../src/capture-app.js';

export interface PublishedEvent {
  event: CaptureMessage;
  message: KafkaMessage;
  partition: number;
}

/** Capture in-process on a free port, built by the same `buildCapture` as `main.ts`, publishing to real topics under a unique prefix. */
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
  const prefix = `${uniqueName('c')}_`;
  const topics = topicNames(prefix);
  const config = testConfig({ ...overrides, kafkaTopicPrefix: prefix, capturePort: 0, host: '127.0.0.1' });
  const logger = createLogger('capture-test', config.logLevel);
  const kafka = createKafka(config, logger, 'capture-test');
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, 2);
  await admin.disconnect();
  // With `brokers`, capture publishes to a Kafka that is away, while the topics and readers stay on the real one.
  const { options, stores } = await buildCapture({ config: brokers ? { ...config, kafkaBrokers: brokers } : config, logger, connectKafka: !brokers });
  const tenant = await createTestTenant(stores.pool, config);
  const runtime: ServiceRuntime = await startServiceRuntime({ ...options, shutdownTimeoutMs: 1000 }, false);
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
