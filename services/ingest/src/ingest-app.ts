import type { Kafka } from 'kafkajs';
import type { ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { ControlPlaneStore, PersonCache, TokenResolver } from '@tributary/control-plane';
import { openGeoIp } from '@tributary/geoip';
import type { RenewingProducer, TopicNames } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import { RowWriter } from './clickhouse-writer.js';
import { refusedRowLetter, sendDeadLetters } from './dead-letters.js';
import { EventProcessor } from './event-processor.js';
import { GroupStore } from './groups/group-store.js';
import { IngestConsumer } from './ingest-consumer.js';
import type { MessageProcessor } from './message-processor.js';
import { PersonOutbox } from './persons/person-outbox.js';
import type { IngestMetrics } from './ingest-metrics.js';

export interface IngestDeps {
  /** Without an insert interval, rows are inserted as soon as the previous insert is done. */
  config: Pick<Config, 'apiKeyPepper' | 'ingestPartitionsConcurrently' | 'ingestMaxQueuedEvents' | 'ingestInsertMaxRows'> & Partial<Pick<Config, 'ingestInsertIntervalMs' | 'ingestInsertQuietIntervalMs'>>;
  logger: Logger;
  pool: Pool;
  redis: Redis;
  clickhouse: ClickHouse;
  kafka: Kafka;
  producer: Pick<RenewingProducer, 'send'>;
  topics: TopicNames;
  groupId: string;
  metrics?: IngestMetrics;
}

/** The ingest consumer as the service runs it; tests may decorate the processor to observe or disturb it. */
export async function buildIngestConsumer(deps: IngestDeps, wrap: (processor: MessageProcessor) => MessageProcessor = (p) => p): Promise<IngestConsumer> {
  const { config, logger, pool, redis, clickhouse, kafka, producer, topics, groupId, metrics } = deps;
  const rowWriter = new RowWriter(clickhouse, {
    minIntervalMs: config.ingestInsertIntervalMs ?? 0,
    quietIntervalMs: config.ingestInsertQuietIntervalMs,
    maxRowsPerInsert: config.ingestInsertMaxRows,
  });
  const personCache = new PersonCache(redis);
  const outbox = new PersonOutbox({
    pool,
    writer: rowWriter,
    sendRefusedRows: (rows) => sendDeadLetters(producer, topics.deadLetter, rows.map((row) => refusedRowLetter(row)), 'person outbox'),
    personCache,
    logger,
  });
  return new IngestConsumer({
    kafka,
    topics,
    groupId,
    writeRows: async (rows) => {
      const refused = await rowWriter.write(rows);
      await outbox.acknowledge(rows.outbox);
      metrics?.written(rows, refused);
      return refused;
    },
    caughtUp: () => rowWriter.quiet(),
    companions: [outbox],
    processingConcurrency: config.ingestPartitionsConcurrently,
    maxQueuedEvents: config.ingestMaxQueuedEvents,
    producer,
    logger,
    processor: wrap(
      new EventProcessor({
        pool,
        tokens: new TokenResolver(new ControlPlaneStore(pool, config.apiKeyPepper), redis),
        groups: new GroupStore(pool),
        personCache,
        geoip: await openGeoIp(),
        logger,
      }),
    ),
  });
}
