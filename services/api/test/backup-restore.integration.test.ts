import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BatchExportStore } from '@tributary/batch-exports';
import { runBackup, runRestore } from '@tributary/cli';
import { DISTINCT_ID_COLUMNS, PERSON_COLUMNS, Sql, distinctIdRow, migrateClickHouse, personRow } from '@tributary/clickhouse';
import { migratePostgres } from '@tributary/postgres';
import { EVENT_ROW_COLUMNS, createTestTenant, eventRow, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { dropIsolatedStores, isolatedStores, startReadServices, type ReadServices } from './isolated-stores.js';

/**
 * A populated store set is backed up and restored into an empty one; the services started on
 * the restored stores answer as those on the originals did. Both sets are databases of their own
 * (Postgres and ClickHouse) with their own queue prefix, so the shared stores are never touched.
 */
const run = uniqueName('backup');
const sourceStores = isolatedStores(`${run}_source`);
const targetStores = isolatedStores(`${run}_target`);
const source = testConfig(sourceStores);
const target = testConfig(targetStores);

let tenant: TestTenant;
let original: ReadServices;
let restored: ReadServices | undefined;
let dir: string;
const distinctIds = ['alice', 'bob', 'carol', 'dave'].map((name) => `${run}-${name}`);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-backup-'));
  await migratePostgres(source);
  await migrateClickHouse(source);
  original = await startReadServices(sourceStores);
  const { api } = original;
  tenant = await createTestTenant(api.pool, source);
  const team = tenant.project.id;

  // Persons in Postgres (what decide and the persons API read) and their copies in ClickHouse.
  const clickhouse = api.clickhouse;
  for (const [i, distinctId] of distinctIds.entries()) {
    const person = { uuid: randomUUID(), team_id: team, properties: { email: `${distinctId}@${i % 2 === 0 ? 'example.com' : 'other.org'}`, plan: i < 2 ? 'pro' : 'free' }, is_identified: true, created_at: new Date(Date.UTC(2026, 0, 1)), version: 1 };
    const { rows } = await api.pool.query<{ id: number }>('INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version) VALUES ($1, $2, $3, true, $4, 1) RETURNING id', [
      person.uuid,
      team,
      person.properties,
      person.created_at,
    ]);
    await api.pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [team, distinctId, rows[0]!.id]);
    await clickhouse.insert('person', PERSON_COLUMNS, [personRow(person, { deleted: false })]);
    await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, [distinctIdRow(team, { distinctId, personUuid: person.uuid, version: 1 }, { deleted: false })]);
  }
  // Events in two months, so the events table is copied in more than one partition.
  const events = distinctIds.flatMap((distinctId, i) =>
    Array.from({ length: 5 + i }, (_, n) =>
      eventRow(team, distinctId, n % 2 === 0 ? '$pageview' : 'signed up', `2026-0${1 + (n % 2)}-1${n} 10:00:00`, { $browser: i % 2 === 0 ? 'Firefox' : 'Chrome', n, text: 'tab\there, "quoted"\nnewline' }),
    ),
  );
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, events);

  const flag = await api.request('POST', `/api/projects/${team}/feature_flags/`, tenant.personalApiKey, {
    key: 'pro-checkout',
    filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }, { properties: [], rollout_percentage: 40 }] },
  });
  expect(flag.status).toBe(201);
  const s3 = { bucket_name: 'exports', region: 'us-east-1', prefix: run, aws_access_key_id: 'id', aws_secret_access_key: 'secret', endpoint_url: new URL(source.s3Endpoint).origin };
  for (const interval of ['hour', 'day']) {
    const created = await api.request('POST', `/api/environments/${team}/batch_exports/`, tenant.personalApiKey, { name: `every ${interval}`, destination: { type: 'S3', config: s3 }, interval });
    expect(created.status).toBe(201);
  }
  // The worker has made the runs of the windows due so far.
  await new BatchExportStore(api.pool).scheduleDue(new Date(Date.now() + 3 * 3_600_000), 0, 10);
});

afterAll(async () => {
  await original?.close();
  await restored?.close();
  await dropIsolatedStores(source);
  await dropIsolatedStores(target);
  await rm(dir, { recursive: true, force: true });
});

const queries = [
  { kind: 'HogQLQuery', query: 'SELECT event, distinct_id, count() AS c, max(properties.text) FROM events GROUP BY event, distinct_id ORDER BY event, distinct_id' },
  { kind: 'HogQLQuery', query: 'SELECT properties.email, properties.plan FROM persons ORDER BY properties.email' },
  { kind: 'HogQLQuery', query: 'SELECT distinct_id, person_id IS NOT NULL FROM person_distinct_ids ORDER BY distinct_id' },
  { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }], dateRange: { date_from: '2026-01-01', date_to: '2026-02-28' }, interval: 'month', breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } },
];

async function answers({ api, flags: decide }: ReadServices) {
  const team = tenant.project.id;
  const results = [];
  for (const query of queries) {
    const { status, body } = await api.request('POST', `/api/environments/${team}/query/`, tenant.personalApiKey, { query });
    expect({ query, status }).toEqual({ query, status: 200 });
    results.push(body.results);
  }
  const flags = [];
  for (const distinctId of [...distinctIds, `${run}-stranger`]) {
    const body = await decide(tenant.project.api_token, distinctId);
    flags.push([distinctId, body.featureFlags, body.errorsWhileComputingFlags]);
  }
  const exports = await api.request('GET', `/api/environments/${team}/batch_exports/`, tenant.personalApiKey);
  const schedules = await api.pool.query('SELECT id, name, interval, paused, start_at, end_at, scheduled_until, created_at FROM batch_exports ORDER BY id');
  const runs = await api.pool.query("SELECT batch_export_id, data_interval_start, data_interval_end, status FROM batch_export_runs ORDER BY batch_export_id, data_interval_start");
  const persons = await api.request('GET', `/api/environments/${team}/persons/?limit=100`, tenant.personalApiKey);
  return {
    results,
    flags,
    exports: exports.body.results.map((e: { id: string; interval: string; paused: boolean; destination: unknown }) => [e.id, e.interval, e.paused, e.destination]),
    schedules: schedules.rows,
    runs: runs.rows,
    persons: persons.body.results.map((p: { uuid: string; distinct_ids: string[]; properties: object }) => [p.uuid, p.distinct_ids, p.properties]).sort(),
  };
}

describe('tributary backup and restore', () => {
  it('restores into empty stores a copy that answers queries, /decide and the export schedules as the original did', async () => {
    const before = await answers(original);
    expect(before.results[0]).toHaveLength(8);
    expect(before.flags.filter(([, flags]) => (flags as Record<string, boolean>)['pro-checkout'])).not.toHaveLength(0);
    expect(before.schedules).toHaveLength(2);
    expect(before.runs.length).toBeGreaterThan(0);

    const { manifest } = await runBackup(source, dir);
    expect(manifest.clickhouse.tables.find((t) => t.table === 'events')?.files).toHaveLength(2);

    await runRestore(target, dir, { force: false });
    restored = await startReadServices(targetStores);
    expect(await answers(restored)).toEqual(before);

    // The worker makes the same next runs from the restored schedules as from the originals.
    const later = new Date(Date.now() + 30 * 3_600_000);
    expect(await new BatchExportStore(restored.api.pool).scheduleDue(later, 0, 100)).toBe(await new BatchExportStore(original.api.pool).scheduleDue(later, 0, 100));
  });

  it('refuses to restore over stores that hold rows unless forced, naming them', async () => {
    await expect(runRestore(target, dir, { force: false })).rejects.toThrow(/refusing to restore over data: Postgres \(.*persons.*\) and ClickHouse database \w+ \(.*events.*\) already hold rows; pass --force/);
    await restored!.api.pool.query("UPDATE feature_flags SET deleted = true WHERE key = 'pro-checkout'");
    await restored!.close();
    restored = undefined;
    await runRestore(target, dir, { force: true });
    restored = await startReadServices(targetStores);
    const { body } = await restored.api.request('GET', `/api/projects/${tenant.project.id}/feature_flags/`, tenant.personalApiKey);
    expect(body.results.map((f: { key: string }) => f.key)).toEqual(['pro-checkout']);
    const events = await restored.api.clickhouse.query<{ c: string }>(Sql.trusted('SELECT count() AS c FROM events'));
    expect(Number(events[0]!.c)).toBe(distinctIds.reduce((n, _, i) => n + 5 + i, 0));
  });

  it('refuses a folder that is not a whole backup', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'tributary-not-a-backup-'));
    try {
      await expect(runRestore(target, empty, { force: true })).rejects.toThrow(/holds no manifest\.json/);
      await expect(runBackup(source, dir)).rejects.toThrow(/is not empty/);
    } finally {
      await rm(empty, { recursive: true });
    }
  });
});
