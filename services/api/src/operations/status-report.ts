import type { Queue } from 'bullmq';
import { sql, type ClickHouse } from '@tributary/clickhouse';
import { SERVICE_NAMES, type ServiceName } from '@tributary/config';
import { DELETION_SCHEDULE } from '@tributary/deletions';
import { consumerLag, messagesOnTopic, type Admin, type PartitionLag, type TopicNames } from '@tributary/kafka';
import type { Pool } from '@tributary/postgres';

export interface ServiceStatus {
  name: ServiceName;
  url: string;
  healthy: boolean;
  ready: boolean;
  /** Why it is not healthy or ready, when it is not. */
  detail: string | null;
}

/** One part of the report, or why it could not be read: a store being away spoils only its own part. */
export type Part<T> = { ok: true; value: T } | { ok: false; error: string };

export interface StatusReport {
  generatedAt: string;
  services: ServiceStatus[];
  consumerLag: Part<{ group: string; total: number; partitions: PartitionLag[] }>;
  events: Part<{ lastMinute: number; lastHour: number }>;
  ingestionWarnings: Part<{ lastHour: number; lastDay: number; byType: { type: string; lastDay: number }[] }>;
  deadLetters: Part<{ topic: string; messages: number }>;
  deletions: Part<{ queued: number; nextRun: string | null }>;
}

export interface StatusDeps {
  serviceUrls: Record<ServiceName, string>;
  admin: Admin;
  groupId: string;
  topics: TopicNames;
  clickhouse: ClickHouse;
  pool: Pool;
  deletionQueue: Pick<Queue, 'getJobScheduler'>;
  clock?: () => Date;
  probeTimeoutMs?: number;
}

async function part<T>(work: () => Promise<T>): Promise<Part<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

async function probe(url: string, timeoutMs: number): Promise<{ ok: boolean; detail: string | null }> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return { ok: response.ok, detail: response.ok ? null : `${new URL(url).pathname} answered ${response.status}` };
  } catch (error) {
    return { ok: false, detail: `${new URL(url).pathname}: ${(error as Error).message}` };
  }
}

/**
 * What an operator checks first, read from the stores and the services themselves: each
 * service's health and readiness, the ingest group's lag, recent throughput, ingestion warnings,
 * dead letters and the deletion queue. Installation-wide: every project's events count.
 */
export async function statusReport(deps: StatusDeps): Promise<StatusReport> {
  const clock = deps.clock ?? (() => new Date());
  const timeoutMs = deps.probeTimeoutMs ?? 2_000;
  const ingestTopics = [deps.topics.realtime, deps.topics.historical, deps.topics.overflow];

  const services = Promise.all(
    SERVICE_NAMES.map(async (name): Promise<ServiceStatus> => {
      const url = deps.serviceUrls[name];
      const [health, ready] = await Promise.all([probe(`${url}/_health`, timeoutMs), probe(`${url}/_ready`, timeoutMs)]);
      return { name, url, healthy: health.ok, ready: ready.ok, detail: health.detail ?? ready.detail };
    }),
  );
  const [serviceStatuses, lag, events, warnings, deadLetters, deletions] = await Promise.all([
    services,
    part(async () => {
      await deps.admin.connect();
      const partitions = await consumerLag(deps.admin, deps.groupId, ingestTopics);
      return { group: deps.groupId, total: partitions.reduce((sum, p) => sum + p.lag, 0), partitions };
    }),
    part(async () => {
      // By arrival, not event time: a historical import counts when it lands.
      const [row] = await deps.clickhouse.query<{ last_minute: string; last_hour: string }>(sql`
        SELECT countIf(inserted_at > now() - 60) AS last_minute, count() AS last_hour
        FROM events WHERE inserted_at > now() - 3600`);
      return { lastMinute: Number(row?.last_minute ?? 0), lastHour: Number(row?.last_hour ?? 0) };
    }),
    part(async () => {
      const rows = await deps.clickhouse.query<{ type: string; last_hour: string; last_day: string }>(sql`
        SELECT type, countIf(timestamp > now() - 3600) AS last_hour, count() AS last_day
        FROM ingestion_warnings WHERE timestamp > now() - 86400 GROUP BY type ORDER BY last_day DESC`);
      return {
        lastHour: rows.reduce((sum, r) => sum + Number(r.last_hour), 0),
        lastDay: rows.reduce((sum, r) => sum + Number(r.last_day), 0),
        byType: rows.map((r) => ({ type: r.type, lastDay: Number(r.last_day) })),
      };
    }),
    part(async () => {
      await deps.admin.connect();
      return { topic: deps.topics.deadLetter, messages: await messagesOnTopic(deps.admin, deps.topics.deadLetter) };
    }),
    part(async () => {
      const [{ rows }, scheduler] = await Promise.all([
        deps.pool.query<{ queued: string }>('SELECT count(*) AS queued FROM event_deletion_requests WHERE done_at IS NULL'),
        deps.deletionQueue.getJobScheduler(DELETION_SCHEDULE.id),
      ]);
      // No scheduler means no worker has started against this Redis: say so rather than guess a date.
      return { queued: Number(rows[0]?.queued ?? 0), nextRun: scheduler?.next ? new Date(scheduler.next).toISOString() : null };
    }),
  ]);
  return { generatedAt: clock().toISOString(), services: serviceStatuses, consumerLag: lag, events, ingestionWarnings: warnings, deadLetters, deletions };
}
