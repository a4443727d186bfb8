import { Registry } from '@tributary/http';
import { topicNames, type Admin } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import type { EventRowOut } from '@tributary/clickhouse';
import { RowBuffer } from './clickhouse-rows.js';
import { ingestMetrics } from './ingest-metrics.js';

const row = (uuid: string): EventRowOut => ({
  uuid, event: 'e', properties: '{}', timestamp: '2026-01-02 03:04:05', timestamp_ms: 0, team_id: 1, distinct_id: 'd', elements_chain: '',
  created_at: '2026-01-02 03:04:05', person_id: uuid, person_properties: '{}', person_created_at: '2026-01-02 03:04:05',
  group_0: '', group_1: '', group_2: '', group_3: '', group_4: '',
});

describe('ingest metrics', () => {
  it('counts as written only the events ClickHouse took, and the rows it refused by table', async () => {
    const registry = new Registry();
    const metrics = ingestMetrics(registry, { admin: {} as Admin, groupId: 'g', topics: topicNames('t_'), logger: createLogger('metrics-test', 'silent') });
    const rows = new RowBuffer();
    for (let i = 0; i < 5; i++) rows.events.add(row(`0190f3c0-0000-7000-8000-00000000000${i}`));
    const line = Buffer.from('refused\n');
    metrics.written(rows, [
      { table: 'events', line, reason: 'Code: 41' },
      { table: 'events', line, reason: 'Code: 41' },
      { table: 'ingestion_warnings', line, reason: 'Code: 41' },
    ]);
    expect(await registry.getSingleMetricAsString('tributary_ingest_events_total')).toMatch(/^tributary_ingest_events_total 3$/m);
    const refused = await registry.getSingleMetricAsString('tributary_ingest_rows_refused_total');
    expect(refused).toMatch(/^tributary_ingest_rows_refused_total\{table="events"\} 2$/m);
    expect(refused).toMatch(/^tributary_ingest_rows_refused_total\{table="ingestion_warnings"\} 1$/m);
  });
});
