import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { DISTINCT_ID_COLUMNS, MIGRATIONS_DIR as CLICKHOUSE_MIGRATIONS, PERSON_COLUMNS, Sql, createClickHouse, distinctIdRow, migrateClickHouse, personRow } from '@tributary/clickhouse';
import { ControlPlaneStore, MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { MIGRATIONS_DIR as POSTGRES_MIGRATIONS, createPool, migratePostgres, type Pool } from '@tributary/postgres';
import { EVENT_ROW_COLUMNS, eventRow, testConfig, uniqueName } from '@tributary/test-support';
import { dropIsolatedStores, isolatedStores, startReadServices, type ReadServices } from './isolated-stores.js';

/**
 * An installation of the previous release is upgraded as `make up` upgrades one: `tributary
 * migrate` runs on the new code before its services start. The previous release is the schema
 * before issue 48 (Postgres migrations up to 0010, ClickHouse up to 0002), the last point before
 * both stores' newest migrations; its data is written with the columns that release wrote.
 */
const PREVIOUS_RELEASE = { postgres: 10, clickhouse: 2 };
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const stores = isolatedStores(uniqueName('upgrade'));
const config = testConfig(stores);

/** A folder holding the migrations up to `last`, as the previous release shipped them. */
async function migrationsUpTo(dir: string, last: number): Promise<string> {
  const copy = await mkdtemp(path.join(tmpdir(), 'tributary-migrations-'));
  for (const file of await readdir(dir)) if (Number(file.slice(0, 4)) <= last) await copyFile(path.join(dir, file), path.join(copy, file));
  return copy;
}

interface OldTenant {
  project: { id: number; api_token: string };
  user: { id: number };
  personalApiKey: string;
}
let tenant: OldTenant;

/** An organization, owner, project and key, the project row with the columns the previous release had. */
async function previousReleaseTenant(pool: Pool): Promise<OldTenant> {
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  const name = uniqueName('old');
  const organization = await store.createOrganization(name);
  const user = await store.createUser({ email: `${name}@example.test` });
  await store.addMembership(organization.id, user.id, MEMBERSHIP_LEVEL.owner);
  const { rows } = await pool.query<{ id: number; api_token: string }>(
    'INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, $3, $4) RETURNING id, api_token',
    [randomUUID(), organization.id, name, `phc_${randomUUID().replaceAll('-', '')}`],
  );
  const { key } = await store.createPersonalApiKey({ userId: user.id, label: name, scopes: ['*'] });
  return { project: rows[0]!, user, personalApiKey: key };
}
let upgraded: ReadServices | undefined;
const folders: string[] = [];
const distinctIds = ['old-1', 'old-2', 'old-3'].map((name) => `${config.clickhouseDatabase}-${name}`);
const eventsPerPerson = 4;

beforeAll(async () => {
  folders.push(await migrationsUpTo(POSTGRES_MIGRATIONS, PREVIOUS_RELEASE.postgres), await migrationsUpTo(CLICKHOUSE_MIGRATIONS, PREVIOUS_RELEASE.clickhouse));
  await migratePostgres(config, folders[0]);
  await migrateClickHouse(config, folders[1]);

  const pool = createPool(config, { max: 2 });
  const clickhouse = createClickHouse(config);
  try {
    tenant = await previousReleaseTenant(pool);
    const team = tenant.project.id;
    await pool.query("INSERT INTO feature_flags (team_id, key, filters) VALUES ($1, 'old-flag', $2)", [
      team,
      { groups: [{ properties: [{ key: 'tier', value: ['gold'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
    ]);
    for (const [i, distinctId] of distinctIds.entries()) {
      const person = { uuid: randomUUID(), team_id: team, properties: { tier: i === 0 ? 'gold' : 'silver' }, is_identified: true, created_at: new Date(Date.UTC(2026, 5, 1)), version: 1 };
      const { rows } = await pool.query<{ id: number }>('INSERT INTO persons (uuid, team_id, properties, is_identified, created_at, version) VALUES ($1, $2, $3, true, $4, 1) RETURNING id', [
        person.uuid,
        team,
        person.properties,
        person.created_at,
      ]);
      await pool.query('INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) VALUES ($1, $2, $3)', [team, distinctId, rows[0]!.id]);
      await clickhouse.insert('person', PERSON_COLUMNS, [personRow(person, { deleted: false })]);
      await clickhouse.insert('person_distinct_id', DISTINCT_ID_COLUMNS, [distinctIdRow(team, { distinctId, personUuid: person.uuid, version: 1 }, { deleted: false })]);
      const events = Array.from({ length: eventsPerPerson }, (_, n) => eventRow(team, distinctId, 'old event', `2026-06-0${n + 1} 12:00:00`, { n }));
      await clickhouse.insert('events', EVENT_ROW_COLUMNS, events);
    }
  } finally {
    await pool.end();
    await clickhouse.close();
  }
});

afterAll(async () => {
  await upgraded?.close();
  await dropIsolatedStores(config);
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

/**
 * A cluster's shards run their part of a distributed query in the database remote_servers names
 * for them (the stack's, infra/cluster/clickhouse-cluster.sh), so a join from this test's own
 * database's events to its persons is read there against the stack's persons. Decide's flags
 * below read the upgraded persons' properties on a cluster too.
 */
const joinsOwnPersons = process.env.TOPOLOGY !== 'cluster';

describe('upgrading from the previous release', () => {
  it('migrates with `tributary migrate`, loses nothing, and the new code reads the old data', async () => {
    const env = { ...process.env, DATABASE_URL: config.databaseUrl, CLICKHOUSE_DATABASE: config.clickhouseDatabase };
    const { stdout } = await promisify(execFile)('npx', ['tributary', 'migrate'], { cwd: root, env });
    expect(stdout).toMatch(/postgres: 0011_batch_exports, .*0014_batch_export_runs_backfill/);
    expect(stdout).toMatch(/clickhouse: 3_events_inserted_at_default, 4_person_timestamp/);

    upgraded = await startReadServices(stores);
    const { api } = upgraded;
    const team = tenant.project.id;
    const query = async (hogql: string) => {
      const { status, body } = await api.request('POST', `/api/environments/${team}/query/`, tenant.personalApiKey, { query: { kind: 'HogQLQuery', query: hogql } });
      expect({ hogql, status }).toEqual({ hogql, status: 200 });
      return body.results;
    };
    expect(await query('SELECT distinct_id, count() FROM events GROUP BY distinct_id ORDER BY distinct_id')).toEqual(distinctIds.map((id) => [id, eventsPerPerson]));
    if (joinsOwnPersons) {
      expect(await query("SELECT person.properties.tier FROM events WHERE event = 'old event' GROUP BY person.properties.tier ORDER BY person.properties.tier")).toEqual([['gold'], ['silver']]);
    }

    const persons = await api.request('GET', `/api/environments/${team}/persons/`, tenant.personalApiKey);
    expect(persons.body.results.flatMap((p: { distinct_ids: string[] }) => p.distinct_ids).sort()).toEqual(distinctIds);
    expect((await upgraded.flags(tenant.project.api_token, distinctIds[0]!)).featureFlags).toEqual({ 'old-flag': true });
    expect((await upgraded.flags(tenant.project.api_token, distinctIds[1]!)).featureFlags).toEqual({ 'old-flag': false });

    // Columns the upgrade added carry their defaults on the old rows.
    expect((await api.pool.query('SELECT is_staff FROM users WHERE id = $1', [tenant.user.id])).rows).toEqual([{ is_staff: false }]);
    expect((await api.request('GET', `/api/projects/${team}/`, tenant.personalApiKey)).body).toMatchObject({ timezone: 'UTC', event_retention_days: null });
    const stamped = await api.clickhouse.query<{ c: string }>(Sql.trusted("SELECT count() AS c FROM person WHERE _timestamp > toDateTime('2000-01-01 00:00:00')"));
    expect(Number(stamped[0]!.c)).toBe(distinctIds.length);
    // A writer that names only some columns (as one older than a column's default would) gets the defaults.
    const { inserted_at: _, ...withoutInsertedAt } = eventRow(team, distinctIds[0]!, 'old event', '2026-06-09 12:00:00');
    await api.clickhouse.insert('events', EVENT_ROW_COLUMNS.filter((c) => c !== 'inserted_at'), [withoutInsertedAt]);
    const inserted = await api.clickhouse.query<{ c: string }>(Sql.trusted("SELECT count() AS c FROM events WHERE event = 'old event' AND inserted_at > toDateTime('2000-01-01 00:00:00')"));
    expect(Number(inserted[0]!.c)).toBe(distinctIds.length * eventsPerPerson + 1);
  });
});
