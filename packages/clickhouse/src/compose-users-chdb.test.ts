import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ComposeClickHouse } from '@tributary/test-support/chdb-compose';
import { ClickHouseError } from './client.js';
import { clickhouseUsersConfig, COMPOSE_CLICKHOUSE, SERVICE_USERS } from './users-config.js';

/**
 * docker-compose's ClickHouse configuration is proven on a current ClickHouse (chdb's 26.x), since
 * no Docker runs here: every file compose mounts loads, every setting in it is a current one, each
 * user gets its profile's settings and rights, and the local stack's (18.16) files differ from
 * compose's only by the settings 26 renamed or made obsolete, named below.
 * Through `@tributary/test-support/chdb-compose`, which says what chdb cannot model (passwords,
 * networks, other servers).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const GiB = 1024 ** 3;

let open: typeof import('@tributary/test-support/chdb-compose').openComposeClickHouse;
let composeFile: typeof import('@tributary/test-support/chdb-compose').readComposeFile;
/** One server, migrated; each test restarts it as the user it tests. */
let dataDir: string;
beforeAll(async () => {
  const support = await import('@tributary/test-support/chdb-compose');
  ({ openComposeClickHouse: open, readComposeFile: composeFile } = support);
  dataDir = await support.createComposeData();
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `body` run on one server start as compose's `user`, closed after whatever happens. */
async function as<T>(user: string, body: (server: ComposeClickHouse) => T | Promise<T>, cluster = false): Promise<T> {
  const server = open({ user, dataDir, cluster });
  try {
    return await body(server);
  } finally {
    server.close();
  }
}

/** ClickHouse's error code for `statement`, or 'ok' when it runs. */
function outcome(server: ComposeClickHouse, statement: string): number | 'ok' {
  try {
    server.run(statement);
    return 'ok';
  } catch (error) {
    if (error instanceof ClickHouseError && error.code !== null) return error.code;
    throw error;
  }
}
const READONLY = 164;
/** allow_ddl 0. */
const QUERY_IS_PROHIBITED = 392;
const ACCESS_DENIED = 497;
const SETTING_CONSTRAINT_VIOLATION = 452;

/** Each profile's own settings as `[name, value]` (not its parent `<profile>`, nor its constraints). */
function profileSettings(text: string): Map<string, [string, string][]> {
  const profiles = /<profiles>([\s\S]*?)<\/profiles>/.exec(text)?.[1] ?? '';
  return new Map(
    [...profiles.matchAll(/<(\w+)>([\s\S]*?)<\/\1>/g)].map(([, name, body]) => [
      name!,
      [...body!.replace(/<constraints>[\s\S]*<\/constraints>/, '').matchAll(/<(\w+)>([^<]*)<\/\1>/g)].filter(([, setting]) => setting !== 'profile').map(([, setting, value]) => [setting!, value!] as [string, string]),
    ]),
  );
}
const constrained = (text: string) => [...(/<constraints>([\s\S]*?)<\/constraints>/.exec(text)?.[1] ?? '').matchAll(/<(\w+)>(?:<const\/>|<max>[^<]*<\/max>)<\/\1>/g)].map(([, name]) => name!);
const settingsOf = (texts: string[]) => texts.flatMap((text) => [...profileSettings(text).values()].flat());

/** The local stack's files: the users file `make up` writes (any passwords) and cluster mode's session defaults, from infra/cluster/clickhouse-cluster.sh. */
const localUsers = clickhouseUsersConfig({
  database: COMPOSE_CLICKHOUSE.database,
  admin: { user: COMPOSE_CLICKHOUSE.admin, password: 'a' },
  query: { ...COMPOSE_CLICKHOUSE.query, password: 'q' },
  passwords: { ingest: 'i', api: 'a', worker: 'w', replica: 'r' },
  defaultPassword: 'd',
  serverMemoryBytes: COMPOSE_CLICKHOUSE.serverMemoryBytes,
});
const localClusterUsers = /cat > "\$etc\/users\.d\/cluster\.xml" <<XML\n([\s\S]*?)\nXML/.exec(readFileSync(path.join(root, 'infra/cluster/clickhouse-cluster.sh'), 'utf8'))![1]!;

/** What 26 says of a setting name: unknown, obsolete (accepted and ignored), an alias of another, or current. */
function status(server: ComposeClickHouse, name: string): string {
  const [row] = server.run(`SELECT is_obsolete, alias_for FROM system.settings WHERE name = '${name}'`).split('\n');
  if (!row) return 'unknown';
  const [obsolete, aliasFor] = row.split('\t');
  return obsolete === '1' ? 'obsolete' : aliasFor ? `alias of ${aliasFor}` : 'current';
}

describe("docker-compose's ClickHouse files on ClickHouse 26 (chdb)", () => {
  it('is the LTS release of the year chdb runs, so what is proven here is what compose runs', async () => {
    const images = [...readFileSync(path.join(root, 'docker-compose.yml'), 'utf8').matchAll(/image: clickhouse\/clickhouse-server:(\S+)/g)].map(([, tag]) => tag!);
    expect(images).toHaveLength(2);
    expect(new Set(images).size).toBe(1);
    const [year, month] = images[0]!.split('.').map(Number);
    expect([3, 8]).toContain(month);
    const version = await as(COMPOSE_CLICKHOUSE.admin, (server) => server.run('SELECT version()').trim());
    expect(Number(version.split('.')[0])).toBe(year);
  });

  it('loads every file compose mounts: the server settings and the cluster topology are the files\'', async () => {
    const server = await as(COMPOSE_CLICKHOUSE.admin, (server) => ({
      settings: server.run("SELECT name, value FROM system.server_settings WHERE name IN ('max_server_memory_usage_to_ram_ratio', 'mark_cache_size') ORDER BY name"),
      clusters: server.run("SELECT cluster, shard_num, replica_num, host_name, port, user, default_database FROM system.clusters WHERE cluster IN ('tributary', 'tributary_one_replica_per_shard') ORDER BY cluster, shard_num, replica_num"),
      macros: server.run('SELECT macro, substitution FROM system.macros ORDER BY macro'),
    }), true);
    expect(server.settings).toBe(`mark_cache_size\t${2 * GiB}\nmax_server_memory_usage_to_ram_ratio\t0.75\n`);
    expect(server.clusters).toBe(
      [
        ...['1\t1\tclickhouse-1', '1\t2\tclickhouse-2', '2\t1\tclickhouse-3', '2\t2\tclickhouse-4'].map((node) => `tributary\t${node}`),
        ...['1\t1\tclickhouse-1', '2\t1\tclickhouse-3'].map((node) => `tributary_one_replica_per_shard\t${node}`),
      ]
        .map((line) => `${line}\t9000\ttributary_replica\ttributary\n`)
        .join(''),
    );
    expect(server.macros).toBe('cluster\ttributary\nreplica\tclickhouse-1\nshard\t01\n');
  });

  it("is the local cluster's topology: two shards of two replicas reached as the replica user, and the same ZooKeeper timeouts", () => {
    const script = readFileSync(path.join(root, 'infra/cluster/clickhouse-cluster.sh'), 'utf8');
    // Each of the script's `$(replica_xml N)` is its printf template's replica element.
    const replica = /replica_xml\(\) \{\n\s*printf '\s*(<replica>.*?<\/replica>)\\n'/.exec(script)![1]!;
    const local = /cat > "\$etc\/config\.d\/cluster\.xml" <<XML\n([\s\S]*?)\nXML/.exec(script)![1]!.replace(/\$\(replica_xml \d\)/g, replica);
    const compose = composeFile('clusterConfig');
    const shape = (text: string) => ({
      shards: [...(/<remote_servers[^>]*>([\s\S]*?)<\/remote_servers>/.exec(text)?.[1] ?? '').matchAll(/<shard>([\s\S]*?)<\/shard>/g)].map(([, shard]) => ({
        internalReplication: /<internal_replication>(\w+)<\/internal_replication>/.exec(shard!)?.[1],
        replicas: [...shard!.matchAll(/<replica>.*?<user>(\w+)<\/user>.*?<\/replica>/g)].map(([, user]) => user),
      })),
      zookeeper: [...(/<zookeeper>([\s\S]*?)<\/zookeeper>/.exec(text)?.[1] ?? '').matchAll(/<(\w+_ms)>(\d+)<\/\1>/g)].map(([, name, value]) => `${name}=${value}`),
      macros: [...(/<macros>([\s\S]*?)<\/macros>/.exec(text)?.[1] ?? '').matchAll(/<(\w+)[ >]/g)].map(([, name]) => name),
    });
    expect(shape(compose)).toEqual(shape(local));
    // The cluster's two shards of two replicas, then the cluster of one replica of each that ALTERs go to.
    const replicas = (count: number) => ({ internalReplication: 'true', replicas: Array.from({ length: count }, () => SERVICE_USERS.replica) });
    expect(shape(compose).shards).toEqual([replicas(2), replicas(2), replicas(1), replicas(1)]);
    // Each server's shard and replica come from its environment in compose, from the script's loop locally; only the cluster's own name is the same text.
    expect(compose).toContain('<cluster>tributary</cluster>');
  });

  it('names every setting and constraint by its current name, and 26 takes each value; the local stack (18.16) differs only where 26 renamed or dropped a setting', async () => {
    const compose = [composeFile('users'), composeFile('clusterUsers')];
    const local = [localUsers, localClusterUsers];
    await as(COMPOSE_CLICKHOUSE.admin, (server) => {
      const composeNames = new Set([...settingsOf(compose).map(([name]) => name), ...constrained(composeFile('users'))]);
      for (const name of composeNames) expect({ name, status: status(server, name) }).toEqual({ name, status: 'current' });
      for (const [name, value] of [...settingsOf(compose), ...settingsOf(local)]) expect({ name, value, outcome: outcome(server, `SELECT 1 SETTINGS ${name} = '${value}'`) }).toEqual({ name, value, outcome: 'ok' });

      const localNames = new Set(settingsOf(local).map(([name]) => name));
      const differences = Object.fromEntries([...localNames].filter((name) => !composeNames.has(name)).map((name) => [name, status(server, name)]));
      expect(differences).toEqual({
        // 18.16's cap on all queries together; on 26 the server setting max_server_memory_usage_to_ram_ratio (docker-config.xml).
        max_memory_usage_for_all_queries: 'obsolete',
        // Cluster mode's synchronous Distributed inserts, renamed in 23.x.
        insert_distributed_sync: 'alias of distributed_foreground_insert',
      });
    });
  });

  it("gives cluster mode's clients the local cluster's session defaults", async () => {
    const canonical = (name: string) => (name === 'insert_distributed_sync' ? 'distributed_foreground_insert' : name);
    const local = Object.fromEntries(profileSettings(localClusterUsers).get('default')!.map(([name, value]) => [canonical(name), value]));
    expect(Object.fromEntries(profileSettings(composeFile('clusterUsers')).get('default')!)).toEqual(local);
    const changed = await as(COMPOSE_CLICKHOUSE.query.user, (server) => server.run(`SELECT name, value FROM system.settings WHERE name IN (${Object.keys(local).map((n) => `'${n}'`).join(', ')}) ORDER BY name`), true);
    expect(changed).toBe(Object.entries(local).sort().map(([name, value]) => `${name}\t${value}\n`).join(''));
  });

  it('logs each user in with its profile, whose settings are the local stack\'s but for the all-queries cap', async () => {
    const local = profileSettings(localUsers);
    const inherited = (profile: string) => [...(profile === 'default' ? [] : local.get('default')!), ...local.get(profile)!].filter(([name]) => name !== 'max_memory_usage_for_all_queries');
    const profiles = { default: 'tributary_locked', [COMPOSE_CLICKHOUSE.admin]: 'default', [COMPOSE_CLICKHOUSE.query.user]: 'tributary_query', [SERVICE_USERS.ingest]: 'tributary_writes', [SERVICE_USERS.api]: 'tributary_writes', [SERVICE_USERS.worker]: 'tributary_mutations', [SERVICE_USERS.replica]: 'tributary_writes' };
    for (const [user, profile] of Object.entries(profiles)) {
      const expected = new Map(inherited(profile));
      const answer = await as(user, (server) => ({
        profiles: server.run('SELECT currentProfiles()').trim(),
        settings: server.run(`SELECT name, value FROM system.settings WHERE name IN (${[...expected.keys()].map((n) => `'${n}'`).join(', ')}) ORDER BY name`),
      }));
      expect({ user, ...answer }).toEqual({
        user,
        profiles: profile === 'default' ? "['default']" : `['default','${profile}']`,
        settings: [...expected].sort(([a], [b]) => a.localeCompare(b)).map(([name, value]) => `${name}\t${value}\n`).join(''),
      });
    }
  });

  it('lets each user do what docs/security.md says, and refuses the rest', async () => {
    const events = `${COMPOSE_CLICKHOUSE.database}.events`;
    const insert = `INSERT INTO ${events} (uuid, event, team_id, distinct_id, timestamp) VALUES (generateUUIDv4(), 'e', 1, 'd', now())`;
    const statements = {
      read: `SELECT count() FROM ${events}`,
      insert,
      delete: `ALTER TABLE ${events} DELETE WHERE team_id = -1`,
      create: `CREATE TABLE IF NOT EXISTS ${COMPOSE_CLICKHOUSE.database}.scratch (x UInt8) ENGINE = Memory`,
      system: 'SELECT count() FROM system.one',
    };
    const outcomes = async (user: string) => as(user, (server) => Object.fromEntries(Object.entries(statements).map(([what, statement]) => [what, outcome(server, statement)])));
    expect(await outcomes(SERVICE_USERS.ingest)).toEqual({ read: 'ok', insert: 'ok', delete: QUERY_IS_PROHIBITED, create: QUERY_IS_PROHIBITED, system: 'ok' });
    expect(await outcomes(SERVICE_USERS.api)).toEqual({ read: 'ok', insert: 'ok', delete: QUERY_IS_PROHIBITED, create: QUERY_IS_PROHIBITED, system: 'ok' });
    expect(await outcomes(SERVICE_USERS.replica)).toEqual({ read: 'ok', insert: 'ok', delete: QUERY_IS_PROHIBITED, create: QUERY_IS_PROHIBITED, system: 'ok' });
    // The deletion batch's mutations need DDL rights on 26 as on 18.16, so the worker keeps DDL in its database.
    expect(await outcomes(SERVICE_USERS.worker)).toEqual({ read: 'ok', insert: 'ok', delete: 'ok', create: 'ok', system: 'ok' });
    expect(await outcomes(COMPOSE_CLICKHOUSE.query.user)).toEqual({ read: 'ok', insert: READONLY, delete: READONLY, create: READONLY, system: 'ok' });
    // The system database alone: anything else is refused before its readonly level is looked at.
    expect(await outcomes('default')).toEqual({ read: ACCESS_DENIED, insert: ACCESS_DENIED, delete: ACCESS_DENIED, create: ACCESS_DENIED, system: 'ok' });
    expect(await outcomes(COMPOSE_CLICKHOUSE.admin)).toEqual({ read: 'ok', insert: 'ok', delete: 'ok', create: 'ok', system: 'ok' });
  });

  it("holds the query endpoint's user to its limits: lower is allowed, higher or a changed cap is refused", async () => {
    const { maxExecutionTimeS, maxMemoryBytes } = COMPOSE_CLICKHOUSE.query;
    await as(COMPOSE_CLICKHOUSE.query.user, (server) => {
      const tried = (settings: string) => outcome(server, `SELECT 1 SETTINGS ${settings}`);
      expect(tried(`max_execution_time = ${maxExecutionTimeS - 1}, max_memory_usage = ${maxMemoryBytes / 2}`)).toBe('ok');
      expect(tried(`max_execution_time = ${maxExecutionTimeS + 1}`)).toBe(SETTING_CONSTRAINT_VIOLATION);
      expect(tried(`max_memory_usage = ${maxMemoryBytes + 1}`)).toBe(SETTING_CONSTRAINT_VIOLATION);
      for (const cap of ['max_memory_usage_for_user', 'max_ast_elements', 'max_expanded_ast_elements', 'max_ast_depth', 'max_query_size']) expect({ cap, outcome: tried(`${cap} = 1`) }).toEqual({ cap, outcome: SETTING_CONSTRAINT_VIOLATION });
      expect(tried('readonly = 0')).toBe(READONLY);
    });
  });
});
