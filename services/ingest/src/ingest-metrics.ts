import { Counter, Gauge, type Registry } from '@tributary/http';
import { consumerLag, type Admin, type TopicNames } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import type { RowBuffer } from './clickhouse-rows.js';
import type { RefusedRow } from './clickhouse-writer.js';

/** What ingest counts beside its HTTP requests; `written` is called with each buffer ClickHouse accepted. */
export interface IngestMetrics {
  /** `refused`: the rows of the buffer ClickHouse refused for their content, which went to the dead-letter topic instead. */
  written(rows: RowBuffer, refused: readonly RefusedRow[]): void;
  /** A definitions write that failed, took longer than a chunk waits, or was dropped after failures. */
  definitionsFailed(reason: 'error' | 'slow' | 'dropped'): void;
}

/** The window of the events-per-second gauge: long enough to smooth chunked writes, short enough to show a stall. */
const RATE_WINDOW_SECONDS = 10;

/**
 * Events written per second and in total, ingestion warnings by type, and the consumer group's
 * lag per partition. Lag is asked of Kafka when scraped (committed offsets against each
 * partition's end), so it is right whichever replica is scraped and costs nothing in between.
 */
export function ingestMetrics(registry: Registry, deps: { admin: Admin; groupId: string; topics: TopicNames; logger: Logger; clock?: () => number }): IngestMetrics {
  const clock = deps.clock ?? Date.now;
  const events = new Counter({ name: 'tributary_ingest_events_total', help: 'Events written to ClickHouse.', registers: [registry] });
  const refusedRows = new Counter({
    name: 'tributary_ingest_rows_refused_total',
    help: 'Rows ClickHouse refused for their content, sent to the dead-letter topic instead, by table.',
    labelNames: ['table'] as const,
    registers: [registry],
  });
  const warnings = new Counter({ name: 'tributary_ingest_warnings_total', help: 'Ingestion warnings written, by type.', labelNames: ['type'] as const, registers: [registry] });
  const definitionFailures = new Counter({
    name: 'tributary_ingest_definition_write_failures_total',
    help: 'Event and property definition writes that failed (kept for the next write), were slower than a chunk waits, or were dropped after failures.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const perSecond = new Map<number, number>();
  new Gauge({
    name: 'tributary_ingest_events_per_second',
    help: `Events written to ClickHouse per second by this process, over the last ${RATE_WINDOW_SECONDS} seconds.`,
    registers: [registry],
    collect() {
      const now = Math.floor(clock() / 1000);
      let sum = 0;
      for (const [second, count] of perSecond) {
        if (second <= now - RATE_WINDOW_SECONDS) perSecond.delete(second);
        else if (second < now) sum += count;
      }
      this.set(sum / RATE_WINDOW_SECONDS);
    },
  });
  const topics = [deps.topics.realtime, deps.topics.historical, deps.topics.overflow];
  new Gauge({
    name: 'tributary_ingest_consumer_lag',
    help: 'Messages the ingest consumer group has not committed yet, per topic and partition.',
    labelNames: ['topic', 'partition'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        await deps.admin.connect();
        for (const p of await consumerLag(deps.admin, deps.groupId, topics)) this.set({ topic: p.topic, partition: String(p.partition) }, p.lag);
      } catch (error) {
        // A scrape while Kafka is away still returns every other figure; the missing lag series says it.
        deps.logger.warn({ err: error }, 'consumer lag unavailable');
      }
    },
  });
  return {
    definitionsFailed: (reason) => definitionFailures.inc({ reason }),
    written(rows, refused) {
      let refusedEvents = 0;
      for (const { table } of refused) {
        refusedRows.inc({ table });
        if (table === 'events') refusedEvents += 1;
      }
      const written = rows.events.length - refusedEvents;
      events.inc(written);
      for (const type of rows.warningTypes) warnings.inc({ type });
      const second = Math.floor(clock() / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + written);
    },
  };
}
