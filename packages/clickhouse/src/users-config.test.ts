import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { clickhouseUsersConfig, COMPOSE_CLICKHOUSE, COMPOSE_ROLES, composePasswordVariable, composeUsersConfig, serverCaps, SERVICE_USERS } from './users-config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GiB = 1024 ** 3;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const options = {
  database: 'tributary',
  admin: { user: 'tributary_admin', password: 'admin-secret' },
  query: { user: 'tributary_query', password: 'query-secret', maxExecutionTimeS: 30, maxMemoryBytes: 2 * GiB },
  passwords: { ingest: 'ingest-secret', api: 'api-secret', worker: 'worker-secret' },
  defaultPassword: 'thrown-away',
  serverMemoryBytes: 16 * GiB,
};

/** The text inside each `<section><name>...</name></section>` child, by name. */
function children(text: string, section: string): Map<string, string> {
  const inner = new RegExp(`<${section}>([\\s\\S]*?)</${section}>`).exec(text)?.[1] ?? '';
  return new Map([...inner.matchAll(/<(\w+)(?: [^>]*)?>([\s\S]*?)<\/\1>/g)].map(([, name, body]) => [name!, body!]));
}
const value = (body: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(body)?.[1];
const databases = (body: string) => [...(/<allow_databases>(.*?)<\/allow_databases>/.exec(body)?.[1] ?? '').matchAll(/<database>([^<]*)<\/database>/g)].map(([, d]) => d);

/** A user's rights as ClickHouse works them out: its profile, following `<profile>` inheritance. */
function rights(text: string, user: string) {
  const users = children(text, 'users');
  const profiles = children(text, 'profiles');
  const body = users.get(user)!;
  const settings: Record<string, string> = {};
  const apply = (profile: string) => {
    const inner = profiles.get(profile)!;
    const parent = value(inner, 'profile');
    if (parent) apply(parent);
    for (const [, name, setting] of inner.replace(/<constraints>[\s\S]*<\/constraints>/, '').matchAll(/<(\w+)>([^<]*)<\/\1>/g)) if (name !== 'profile') settings[name!] = setting!;
  };
  apply(value(body, 'profile')!);
  return { readonly: settings.readonly ?? '0', allowDdl: settings.allow_ddl ?? '1', databases: databases(body), settings };
}

describe('the users file make up gives ClickHouse', () => {
  const text = clickhouseUsersConfig(options);
  const users = children(text, 'users');

  it('has no user without a password, and every user reaches it from loopback only', () => {
    expect([...users.keys()].sort()).toEqual(['default', 'tributary_admin', 'tributary_api', 'tributary_ingest', 'tributary_query', 'tributary_worker']);
    for (const [name, body] of users) {
      expect({ name, hash: value(body, 'password_sha256_hex') }).toEqual({ name, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(body).not.toMatch(/<password>/);
      expect({ name, networks: /<networks[^>]*>(.*)<\/networks>/.exec(body)?.[1] }).toEqual({ name, networks: '<ip>127.0.0.1</ip><ip>::1</ip>' });
    }
    expect(value(users.get('tributary_admin')!, 'password_sha256_hex')).toBe(sha256('admin-secret'));
    expect(value(users.get('tributary_ingest')!, 'password_sha256_hex')).toBe(sha256('ingest-secret'));
    expect(() => clickhouseUsersConfig({ ...options, admin: { ...options.admin, password: '' } })).toThrow('no password');
    expect(() => clickhouseUsersConfig({ ...options, passwords: { ...options.passwords, api: '' } })).toThrow('no password');
  });

  it('gives the query endpoint reads and settings only (readonly 2), of the tributary database alone, with its own limits', () => {
    const query = rights(text, 'tributary_query');
    expect(query).toMatchObject({ readonly: '2', allowDdl: '0', databases: ['tributary'] });
    expect(query.settings).toMatchObject({ max_execution_time: '30', max_memory_usage: String(2 * GiB), max_memory_usage_for_user: String(6 * GiB) });
  });

  it('lets ingest and the api write rows but run no DDL, the worker mutate, each in the tributary database; the default user read only the system one', () => {
    expect(rights(text, 'tributary_ingest')).toMatchObject({ readonly: '0', allowDdl: '0', databases: ['tributary'] });
    expect(rights(text, 'tributary_api')).toMatchObject({ readonly: '0', allowDdl: '0', databases: ['tributary'] });
    expect(rights(text, 'tributary_worker')).toMatchObject({ readonly: '0', allowDdl: '1', databases: ['tributary'] });
    expect(rights(text, 'default')).toMatchObject({ readonly: '1', allowDdl: '0', databases: ['system'] });
    expect(rights(text, 'tributary_admin')).toMatchObject({ readonly: '0', allowDdl: '1', databases: [] });
  });

  it('adds the replica user, for cluster mode, only when given its password', () => {
    const cluster = clickhouseUsersConfig({ ...options, passwords: { ...options.passwords, replica: 'replica-secret' } });
    expect(rights(cluster, SERVICE_USERS.replica)).toMatchObject({ readonly: '0', allowDdl: '0', databases: [] });
  });

  it('caps every user: memory per query and for all queries, syntax-tree size and depth, query size', () => {
    for (const user of users.keys()) {
      expect({ user, settings: rights(text, user).settings }).toEqual({
        user,
        settings: expect.objectContaining({
          max_memory_usage_for_all_queries: String(12 * GiB),
          max_ast_elements: '50000',
          max_expanded_ast_elements: '500000',
          max_ast_depth: '1000',
          max_query_size: '262144',
        }),
      });
    }
    expect(serverCaps(16 * GiB)).toMatchObject({ maxMemoryUsage: 8 * GiB, maxMemoryUsageForAllQueries: 12 * GiB, queryUserMaxMemory: 6 * GiB });
    expect(serverCaps(4 * GiB)).toMatchObject({ maxMemoryUsage: 2 * GiB, maxMemoryUsageForAllQueries: 3 * GiB });
  });

});

describe("docker-compose's ClickHouse users (infra/clickhouse/docker-users.xml)", () => {
  const docker = readFileSync(path.join(root, 'infra/clickhouse/docker-users.xml'), 'utf8');

  it('are what users-config.ts renders for compose, so they cannot drift from the local stack\'s (rerun infra/clickhouse/docker-users-file.ts)', () => {
    expect(docker).toBe(composeUsersConfig());
  });

  it('have the local stack\'s users, rights and caps, but for the all-queries cap, a server setting on current releases', () => {
    const cluster = clickhouseUsersConfig({ ...options, passwords: { ...options.passwords, replica: 'r' } });
    expect([...children(docker, 'users').keys()].sort()).toEqual([...children(cluster, 'users').keys()].sort());
    for (const user of children(cluster, 'users').keys()) {
      const { settings: ours, ...ourRights } = rights(cluster, user);
      const { settings: theirs, ...theirRights } = rights(docker, user);
      expect({ user, rights: theirRights }).toEqual({ user, rights: ourRights });
      // Obsolete and ignored on current releases: infra/clickhouse/docker-config.xml's max_server_memory_usage_to_ram_ratio (0.75) is the same cap.
      const { max_memory_usage_for_all_queries: _, ...comparable } = ours;
      expect({ user, settings: theirs }).toEqual({ user, settings: comparable });
    }
    expect(readFileSync(path.join(root, 'infra/clickhouse/docker-config.xml'), 'utf8')).toContain('<max_server_memory_usage_to_ram_ratio>0.75</max_server_memory_usage_to_ram_ratio>');
  });

  it("hold the query endpoint's user to the limits the api sends: it may lower them, not raise them", () => {
    const constraints = /<constraints>([\s\S]*?)<\/constraints>/.exec(children(docker, 'profiles').get('tributary_query')!)![1]!;
    const rules = Object.fromEntries([...constraints.matchAll(/<(\w+)>(.*?)<\/\1>/g)].map(([, name, rule]) => [name!, rule!]));
    expect(rules).toEqual({
      max_execution_time: `<max>${COMPOSE_CLICKHOUSE.query.maxExecutionTimeS}</max>`,
      max_memory_usage: `<max>${COMPOSE_CLICKHOUSE.query.maxMemoryBytes}</max>`,
      max_memory_usage_for_user: '<const/>',
      max_ast_elements: '<const/>',
      max_expanded_ast_elements: '<const/>',
      max_ast_depth: '<const/>',
      max_query_size: '<const/>',
    });
  });

  it("are compose's: its database, the single server's memory, and each password from the variable compose gives every server", () => {
    const yaml = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    const compose = parse(yaml, { merge: true }) as { services: Record<string, { mem_limit?: string; environment?: Record<string, string> }> };
    expect(compose.services.clickhouse!.mem_limit).toBe(`${COMPOSE_CLICKHOUSE.serverMemoryBytes / GiB}g`);
    expect(compose.services.api!.environment).toMatchObject({ CLICKHOUSE_DATABASE: COMPOSE_CLICKHOUSE.database, QUERY_CLICKHOUSE_USER: COMPOSE_CLICKHOUSE.query.user });
    expect(compose.services.migrate!.environment).toMatchObject({ CLICKHOUSE_USER: COMPOSE_CLICKHOUSE.admin });
    for (const role of COMPOSE_ROLES) {
      expect(docker).toContain(`<password from_env="${composePasswordVariable(role)}"/>`);
      expect(yaml).toContain(`${composePasswordVariable(role)}: \${${composePasswordVariable(role)}:?`);
    }
  });
});
