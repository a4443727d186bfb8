import { randomUUID } from 'node:crypto';
import { createClickHouse, sql, type ClickHouse } from '@tributary/clickhouse';
import { createKafka, createProducer, ensureTopics, encodeCaptureEvents, encodeCaptureMessage, messageKey, partitionOfKey, topicNames, type CaptureMessage, type RenewingProducer, type TopicNames } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { createPool, type Pool } from '@tributary/postgres';
import { createRedis, type Redis } from '@tributary/redis';
import { createTestTenant, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import type { Config } from '@tributary/config';
import type { Kafka } from 'kafkajs';
import { buildIngestConsumer } from '../src/ingest-app.js';
import type { IngestConsumer } from '../src/ingest-consumer.js';
import type { MessageProcessor } from '../src/message-processor.js';

export interface StoredEventRow {
  uuid: string;
  event: string;
  distinct_id: string;
  properties: string;
  timestamp: string;
  timestamp_ms: string;
  person_id: string;
  person_properties: string;
  group_0: string;
  group_1: string;
}

interface CaptureOptions {
  historical?: boolean;
  now?: string;
  sentAt?: string | null;
  ip?: string;
}

/** Real Kafka topics under a unique prefix, a real consumer group, Postgres, Redis and ClickHouse. */
export interface IngestHarness {
  tenant: TestTenant;
  topics: TopicNames;
  pool: Pool;
  clickhouse: ClickHouse;
  redis: Redis;
  kafka: Kafka;
  producer: RenewingProducer;
  /**
   * Publishes events as one-event messages keyed by token and distinct id (as the api does), or
   * with `several`, as capture does: one several-event message per partition the events reach.
   */
  send: (events: Record<string, unknown>[], options?: CaptureOptions & { topic?: string; several?: boolean }) => Promise<string[]>;
  /** The capture messages `send` publishes for these events. */
  captureMessages: (events: Record<string, unknown>[], options?: CaptureOptions) => CaptureMessage[];
  /** `wrap` decorates the real processor, to observe or disturb what the consumer hands it. */
  startConsumer: (clickhouseOverride?: ClickHouse, wrap?: (processor: MessageProcessor) => MessageProcessor) => Promise<IngestConsumer>;
  events: () => Promise<StoredEventRow[]>;
  waitForEvents: (count: number) => Promise<StoredEventRow[]>;
  close: () => Promise<void>;
}

const PARTITIONS = 2;

export async function startIngestHarness(overrides: Partial<Config> = {}): Promise<IngestHarness> {
  const config = testConfig(overrides);
  const logger = createLogger('ingest-test', config.logLevel);
  const prefix = `${uniqueName('t')}_`;
  const topics = topicNames(prefix);
  const pool = createPool(config, { max: 6 });
  const clickhouse = createClickHouse(config);
  const redis = createRedis(config);
  const kafka = createKafka(config, logger, 'ingest-test');
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, prefix, PARTITIONS);
  await admin.disconnect();
  const producer = createProducer(kafka);
  await producer.connect();
  const tenant = await createTestTenant(pool, config);
  const groupId = uniqueName('ingest-test');
  const consumers: IngestConsumer[] = [];

  const harness: IngestHarness = {
    tenant,
    topics,
    pool,
    clickhouse,
    redis,
    kafka,
    producer,
    captureMessages(events, options = {}) {
      const now = options.now ?? new Date().toISOString();
      return events.map((event) => ({
        uuid: (event.uuid as string | undefined) ?? randomUUID(),
        distinct_id: String(event.distinct_id),
        ip: options.ip ?? '127.0.0.1',
        data: JSON.stringify(event),
        now,
        sent_at: options.sentAt ?? null,
        token: tenant.project.api_token,
        historical_migration: options.historical ?? false,
      }));
    },
    async send(events, options = {}) {
      const messages = harness.captureMessages(events, options);
      const keyed = messages.map((m) => ({ message: m, key: messageKey(m.token, m.distinct_id) }));
      let kafkaMessages;
      if (options.several) {
        const byPartition = new Map<number, CaptureMessage[]>();
        for (const { message, key } of keyed) {
          const partition = partitionOfKey(key, PARTITIONS);
          byPartition.set(partition, [...(byPartition.get(partition) ?? []), message]);
        }
        kafkaMessages = [...byPartition].flatMap(([partition, list]) => encodeCaptureEvents(list).map((value) => ({ partition, key: null, value })));
      } else {
        kafkaMessages = keyed.map(({ message, key }) => ({ key, value: encodeCaptureMessage(message) }));
      }
      await producer.send({ topic: options.topic ?? (options.historical ? topics.historical : topics.realtime), acks: -1, messages: kafkaMessages });
      return messages.map((m) => m.uuid);
    },
    async startConsumer(clickhouseOverride, wrap) {
      const consumer = await buildIngestConsumer(
        { config, logger, pool, redis, clickhouse: clickhouseOverride ?? clickhouse, kafka, producer, topics, groupId },
        wrap,
      );
      await consumer.start();
      consumers.push(consumer);
      return consumer;
    },
    async events() {
      return clickhouse.query<StoredEventRow>(
        sql`SELECT toString(uuid) AS uuid, event, distinct_id, properties, timestamp, timestamp_ms, toString(person_id) AS person_id,
              person_properties, group_0, group_1
            FROM events WHERE team_id = ${tenant.project.id} ORDER BY timestamp, timestamp_ms, uuid LIMIT 1 BY uuid`,
      );
    },
    async waitForEvents(count) {
      return waitFor(async () => {
        const rows = await harness.events();
        return rows.length >= count ? rows : undefined;
      }, { what: `${count} events in ClickHouse`, timeoutMs: 60_000 });
    },
    async close() {
      for (const consumer of consumers) await consumer.stop().catch(() => undefined);
      await producer.disconnect();
      await pool.end();
      await clickhouse.close();
      redis.disconnect();
    },
  };
  return harness;
}
