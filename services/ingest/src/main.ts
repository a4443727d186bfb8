import { loadConfig } from '@tributary/config';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { createRedis } from '@tributary/redis';
import { createClickHouse } from '@tributary/clickhouse';
import { ControlPlaneStore, PersonCache, TokenResolver } from '@tributary/control-plane';
import { createKafka, createProducer, topicNames } from '@tributary/kafka';
import { startServiceRuntime } from '@tributary/http';
import { EventProcessor } from './event-processor.js';
import { GroupStore } from './groups/group-store.js';
import { IngestConsumer } from './ingest-consumer.js';

const config = loadConfig();
const logger = createLogger('ingest', config.logLevel);
const pool = createPool(config, { max: config.ingestPartitionsConcurrently + 2 });
const redis = createRedis(config);
const clickhouse = createClickHouse(config);
const kafka = createKafka(config, logger, 'ingest');
const producer = createProducer(kafka);
await producer.connect();

const consumer = new IngestConsumer({
  kafka,
  topics: topicNames(config.kafkaTopicPrefix),
  groupId: config.ingestConsumerGroup,
  partitionsConcurrently: config.ingestPartitionsConcurrently,
  clickhouse,
  producer,
  logger,
  processor: new EventProcessor({
    pool,
    tokens: new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis),
    groups: new GroupStore(pool),
    personCache: new PersonCache(redis),
    logger,
  }),
});
await consumer.start();

await startServiceRuntime({
  name: 'ingest',
  logger,
  host: config.host,
  port: config.ingestPort,
  shutdownTimeoutMs: config.shutdownTimeoutMs,
  ready: async () => consumer.isRunning && (await clickhouse.ping()),
  stop: async () => {
    // Disconnecting the consumer lets the batch in hand finish and commit before leaving the group.
    await consumer.stop();
    await producer.disconnect();
    await pool.end();
    await clickhouse.close();
    redis.disconnect();
  },
});
