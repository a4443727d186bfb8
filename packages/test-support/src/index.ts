import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { EVENTS_TABLE_COLUMNS, type EventsTableColumn } from '@tributary/clickhouse';
import { loadConfig, type Config } from '@tributary/config';
import { ControlPlaneStore, MEMBERSHIP_LEVEL, type Project, type User } from '@tributary/control-plane';
import { createPool, withTransaction, type Pool } from '@tributary/postgres';
import type { GrantedScope } from '@tributary/auth';

/** Config for integration tests: the stores `make up` started, quiet logs. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return loadConfig({ ...process.env, TRIBUTARY_ENV: 'test', LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' }, overrides);
}

/** A short unique suffix, so tests isolate themselves by name (projects, topics, groups). */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}

/** A port nothing listens on now, from the kernel: for a process a test or bench starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export { waitFor } from './wait-for.js';

export interface TestTenant {
  project: Project;
  user: User;
  organizationId: string;
  personalApiKey: string;
}

/** A fresh organization, owner, project and personal API key in the real Postgres. */
export async function createTestTenant(pool: Pool, config: Config, scopes: GrantedScope[] = ['*']): Promise<TestTenant> {
  return withTransaction(pool, async (client) => {
    const store = new ControlPlaneStore(client, config.apiKeyPepper);
    const name = uniqueName('test');
    const organization = await store.createOrganization(name);
    const user = await store.createUser({ email: `${name}@example.test` });
    await store.addMembership(organization.id, user.id, MEMBERSHIP_LEVEL.owner);
    const project = await store.createProject(organization.id, name);
    const { key } = await store.createPersonalApiKey({ userId: user.id, label: name, scopes });
    return { project, user, organizationId: organization.id, personalApiKey: key };
  });
}

/** Issues another key for an existing tenant's user. */
export async function createKey(pool: Pool, config: Config, userId: number, scopes: GrantedScope[], scopedProjects: number[] | null = null): Promise<string> {
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  return (await store.createPersonalApiKey({ userId, label: uniqueName('key'), scopes, scopedProjects })).key;
}

export interface TestMember {
  user: User;
  membershipId: string;
  personalApiKey: string;
}

/** Another user in an existing organization, at `level`, with a key of their own. */
export async function createMember(pool: Pool, config: Config, organizationId: string, level: number = MEMBERSHIP_LEVEL.member, scopes: GrantedScope[] = ['*']): Promise<TestMember> {
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  const user = await store.createUser({ email: `${uniqueName('member')}@example.test` });
  await store.addMembership(organizationId, user.id, level);
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM organization_memberships WHERE organization_id = $1 AND user_id = $2', [organizationId, user.id]);
  const { key } = await store.createPersonalApiKey({ userId: user.id, label: uniqueName('key'), scopes });
  return { user, membershipId: rows[0]!.id, personalApiKey: key };
}

export { createPool };

/**
 * Calls the management API through a running front door as the tenant's key, for tests that
 * drive the whole system as an SDK user would; a non-2xx answer throws with its body.
 */
export function frontDoorApi(front: string, tenant: () => TestTenant, scope: 'environments' | 'projects' = 'environments') {
  // Responses are whatever the route returns; tests read fields they assert on.
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const { project, personalApiKey } = tenant();
    const response = await fetch(`${front}/api/${scope}/${project.id}${path}`, {
      method,
      headers: { authorization: `Bearer ${personalApiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
}

/** Every column of a stored events row, for tests that write straight into ClickHouse (`inserted_at` too). */
export const EVENT_ROW_COLUMNS = EVENTS_TABLE_COLUMNS;

export type EventRow = Record<EventsTableColumn, string | number>;

/**
 * One event as ingest stores it, at `timestamp` (`YYYY-MM-DD hh:mm:ss`, UTC): created and inserted
 * then, with no stored person or groups unless `overrides` give them.
 */
export function eventRow(teamId: number, distinctId: string, event: string, timestamp: string, properties: object = {}, overrides: Partial<EventRow> = {}): EventRow {
  return {
    uuid: randomUUID(),
    event,
    properties: JSON.stringify(properties),
    timestamp,
    timestamp_ms: 0,
    team_id: teamId,
    distinct_id: distinctId,
    elements_chain: '',
    created_at: timestamp,
    person_id: '00000000-0000-0000-0000-000000000000',
    person_properties: '{}',
    person_created_at: timestamp,
    group_0: '',
    group_1: '',
    group_2: '',
    group_3: '',
    group_4: '',
    inserted_at: timestamp,
    ...overrides,
  };
}

export { AnswerDroppingRelay } from './answer-dropping-relay.js';
export { replicasHold } from './replicas.js';
