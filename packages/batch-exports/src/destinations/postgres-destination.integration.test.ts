import pg from 'pg';
import { freePort, testConfig, uniqueName } from '@tributary/test-support';
import { ExportError, NonRetryableExportError } from './export-error.js';
import { PostgresDestination, type PostgresDestinationConfig } from './postgres-destination.js';
import { eventRecord, exportPart, localGuard, personRecord } from './test-parts.js';

/** Against the machine's Postgres, in a database this file creates and drops, a table per test. */
const server = new URL(testConfig().databaseUrl);
const database = uniqueName('export_target');
const admin = new pg.Client({ connectionString: testConfig().databaseUrl });
const target = new pg.Client({ host: server.hostname, port: Number(server.port), user: server.username, password: server.password, database });
const destinations: PostgresDestination[] = [];

beforeAll(async () => {
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
  await target.connect();
});
afterAll(async () => {
  await Promise.all(destinations.map((d) => d.close()));
  await target.end();
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(database)} WITH (FORCE)`);
  await admin.end();
});

function destination(overrides: Partial<PostgresDestinationConfig> = {}): PostgresDestination {
  const created = new PostgresDestination({
    user: decodeURIComponent(server.username),
    password: decodeURIComponent(server.password),
    host: server.hostname,
    port: Number(server.port || 5432),
    database,
    schema: 'public',
    table_name: uniqueName('events'),
    has_self_signed_cert: false,
    include_events: null,
    exclude_events: null,
    ...overrides,
  }, localGuard);
  destinations.push(created);
  return created;
}
const tableOf = (d: PostgresDestination) => (d as unknown as { config: PostgresDestinationConfig }).config.table_name;
const rows = async (table: string, orderBy = 'uuid') => (await target.query(`SELECT * FROM ${pg.escapeIdentifier(table)} ORDER BY ${orderBy}`)).rows as Record<string, unknown>[];

describe('Postgres destination', () => {
  it("creates the table with PostHog's event columns and a primary key on uuid", async () => {
    const events = destination();
    await events.write(exportPart([eventRecord(1)]));
    const { rows: columns } = await target.query<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position',
      [tableOf(events)],
    );
    expect(columns.map((c) => `${c.column_name} ${c.data_type}`)).toEqual([
      'uuid character varying',
      'event character varying',
      'properties jsonb',
      'elements jsonb',
      'set jsonb',
      'set_once jsonb',
      'distinct_id character varying',
      'team_id integer',
      'ip character varying',
      'site_url character varying',
      'timestamp timestamp with time zone',
    ]);
    const { rows: keys } = await target.query(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = $1::regclass AND i.indisprimary`,
      [tableOf(events)],
    );
    expect(keys).toEqual([{ attname: 'uuid' }]);
  });

  it('creates one table when workers writing runs of one export create it at the same moment', async () => {
    // Postgres's CREATE TABLE IF NOT EXISTS is not atomic: concurrent ones fail with a duplicate
    // type, relation or key, which must not fail a run for good.
    for (let attempt = 0; attempt < 5; attempt++) {
      const table_name = uniqueName('events');
      const writers = Array.from({ length: 12 }, () => destination({ table_name }));
      await Promise.all(writers.map((writer, i) => writer.write(exportPart([eventRecord(i)]))));
      expect(await rows(table_name)).toHaveLength(writers.length);
    }
  });

  it('stores each event with the values PostHog puts in each column', async () => {
    const events = destination();
    const record = eventRecord(4, { properties: { $ip: '192.0.2.1', $set: { plan: 'pro' }, $set_once: { first: 'x' }, nul: 'a\u0000b' } });
    expect(await events.write(exportPart([record]))).toMatchObject({ records: 1, bytes: expect.any(Number) });
    expect(await rows(tableOf(events))).toEqual([
      {
        uuid: record.uuid,
        event: '$pageview',
        properties: { $ip: '192.0.2.1', $set: { plan: 'pro' }, $set_once: { first: 'x' }, nul: 'ab' },
        elements: JSON.stringify('a:href="/x"nth-child="1"'),
        set: { plan: 'pro' },
        set_once: { first: 'x' },
        distinct_id: 'user-4',
        team_id: 7,
        ip: '192.0.2.1',
        site_url: null,
        timestamp: new Date(record.timestamp as string),
      },
    ]);
  });

  it('leaves one row per uuid when a part is written again, with the properties of the latest write', async () => {
    const events = destination();
    const records = Array.from({ length: 30 }, (_, i) => eventRecord(i));
    await events.write(exportPart(records));
    await events.write(exportPart(records));
    const changed = records.map((r, i) => (i < 10 ? { ...r, properties: { ...(r.properties as object), plan: 'changed' } } : r));
    // ClickHouse may return an event twice until it merges its parts.
    await destination({ table_name: tableOf(events) }).write(exportPart([...changed, changed[0]!]));
    const stored = await rows(tableOf(events));
    expect(stored).toHaveLength(30);
    expect(stored.map((r) => r.uuid)).toEqual(records.map((r) => r.uuid));
    expect(stored.filter((r) => (r.properties as { plan?: string }).plan === 'changed')).toHaveLength(10);
  });

  it('writes only the included events, without the excluded ones', async () => {
    const events = destination({ exclude_events: ['signed_up'] });
    const result = await events.write(exportPart(Array.from({ length: 9 }, (_, i) => eventRecord(i))));
    expect(result.records).toBe(6);
    expect(new Set((await rows(tableOf(events))).map((r) => r.event))).toEqual(new Set(['$pageview']));
  });

  it('keeps one row per distinct id for persons, replaced only by a newer version', async () => {
    const persons = destination({ table_name: uniqueName('persons') });
    await persons.write(exportPart([personRecord('a', { person: 1, mapping: 1 }, { plan: 'free' }), personRecord('b', { person: 1, mapping: 1 }, { plan: 'free' })], 0, 'persons'));
    await persons.write(exportPart([personRecord('a', { person: 2, mapping: 1 }, { plan: 'pro' }), personRecord('b', { person: 0, mapping: 0 }, { plan: 'stale' })], 0, 'persons'));
    const stored = await rows(tableOf(persons), 'distinct_id');
    expect(stored.map((r) => [r.distinct_id, r.properties, Number(r.person_version), r.team_id, r.is_deleted])).toEqual([
      ['a', { plan: 'pro' }, 2, 7, false],
      ['b', { plan: 'free' }, 1, 7, false],
    ]);
  });

  it('writes into an existing table in another schema, in the columns it has', async () => {
    const table = uniqueName('narrow');
    await target.query('CREATE SCHEMA IF NOT EXISTS analytics');
    await target.query(`CREATE TABLE analytics.${table} (uuid TEXT PRIMARY KEY, event TEXT, properties JSONB)`);
    await destination({ schema: 'analytics', table_name: table }).write(exportPart([eventRecord(1), eventRecord(2)]));
    expect((await target.query(`SELECT * FROM analytics.${table} ORDER BY uuid`)).rows).toEqual([
      { uuid: eventRecord(1).uuid, event: '$pageview', properties: eventRecord(1).properties },
      { uuid: eventRecord(2).uuid, event: '$pageview', properties: eventRecord(2).properties },
    ]);
  });

  it('writes into an existing table of its key column alone, once per uuid, when a part is written again', async () => {
    const table = uniqueName('keys_only');
    await target.query(`CREATE TABLE ${table} (uuid TEXT PRIMARY KEY)`);
    const keysOnly = destination({ table_name: table });
    await keysOnly.write(exportPart([eventRecord(1), eventRecord(2)]));
    await keysOnly.write(exportPart([eventRecord(2)]));
    expect(await rows(table)).toEqual([{ uuid: eventRecord(1).uuid }, { uuid: eventRecord(2).uuid }]);
  });

  it('fails for good, naming the table and the cause, when rows cannot be merged or the target is missing', async () => {
    const table = uniqueName('no_key');
    await target.query(`CREATE TABLE ${table} (uuid TEXT, event TEXT)`);
    const noKey = destination({ table_name: table }).write(exportPart([eventRecord(1)]));
    await expect(noKey).rejects.toThrow(NonRetryableExportError);
    await expect(noKey).rejects.toThrow(new RegExp(`^Postgres table "public"."${table}" in database "${database}" .*SQLSTATE 42P10.*primary key`));
    await expect(destination({ schema: 'missing_schema' }).write(exportPart([eventRecord(1)]))).rejects.toThrow(/SQLSTATE 3F000/);
    const noDatabase = destination({ database: 'no_such_database_here' }).write(exportPart([eventRecord(1)]));
    await expect(noDatabase).rejects.toThrow(NonRetryableExportError);
    await expect(noDatabase).rejects.toThrow(/no_such_database_here.*does not exist \(SQLSTATE 3D000\)/);
  });

  it('fails so the run retries when the server cannot be reached', async () => {
    const port = await freePort();
    const failure = await destination({ port }).write(exportPart([eventRecord(1)])).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ExportError);
    expect(failure).not.toBeInstanceOf(NonRetryableExportError);
    expect((failure as Error).message).toMatch(new RegExp(`^Postgres table .* at ${server.hostname}:${port}: .*ECONNREFUSED`));
  });
});
