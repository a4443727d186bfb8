import { createHash } from 'node:crypto';

/**
 * ClickHouse's users file for the stacks Tributary starts itself (`make up`, cluster mode, the
 * chaos stack): one user per client with a password, the least rights ClickHouse 18.16 can
 * express (a readonly level, `allow_ddl`, `allow_databases`, loopback networks), and the
 * server-wide caps in the profile every user starts from. 18.16 has no GRANT, no setting
 * constraints and no per-table rights: docs/security.md ("Service and store") says what that
 * leaves open. docker-compose's ClickHouse (24.8) reads the same users from
 * infra/clickhouse/docker-users.xml, which a test keeps in step with this.
 */

/** The users the stack's processes connect as, by what they do. */
export const SERVICE_USERS = {
  /** Ingest: inserts events, persons, distinct ids and groups. */
  ingest: 'tributary_ingest',
  /** The api's own reads (persons, insights' caches) and person-row inserts (deletions, merges). */
  api: 'tributary_api',
  /** The worker: exports read; the deletion batch runs `ALTER TABLE ... DELETE` mutations. */
  worker: 'tributary_worker',
  /** Cluster mode: what one server's Distributed tables connect to the others as. */
  replica: 'tributary_replica',
} as const;
export type ServiceUser = keyof typeof SERVICE_USERS;

const GiB = 1024 ** 3;

/** The caps every profile shares, derived from the memory one server may take (its address-space limit). */
export interface ServerCaps {
  /** Bytes one query may use (the query user's own is lower: QUERY_MAX_MEMORY_BYTES). */
  maxMemoryUsage: number;
  /** Bytes all queries together may use: 18.16 raises this one global tracker to the largest value any query carries, so every profile has the same. */
  maxMemoryUsageForAllQueries: number;
  /** Bytes the query user's queries together may use, so tenants' queries leave room for ingest and the services. */
  queryUserMaxMemory: number;
  /** Elements of a query's syntax tree before and after aliases and asterisks are expanded, and its depth. */
  maxAstElements: number;
  maxExpandedAstElements: number;
  maxAstDepth: number;
  /** Bytes of a statement's text (an INSERT's rows are not counted). */
  maxQuerySize: number;
}

/**
 * The caps for a server that may use `serverMemoryBytes` in all (the address-space limit it runs
 * under): three quarters of it for queries together, the rest for caches, merges, thread stacks
 * and the address space malloc reserves without using; half for one query (at most 8 GiB), half
 * of the queries' share for the query endpoint's user. The syntax-tree and query-size caps are
 * ClickHouse's own defaults, written down so that no profile can lose them.
 */
export function serverCaps(serverMemoryBytes: number): ServerCaps {
  const allQueries = Math.floor((serverMemoryBytes * 3) / 4);
  return {
    maxMemoryUsage: Math.min(8 * GiB, Math.floor(serverMemoryBytes / 2)),
    maxMemoryUsageForAllQueries: allQueries,
    queryUserMaxMemory: Math.floor(allQueries / 2),
    maxAstElements: 50_000,
    maxExpandedAstElements: 500_000,
    maxAstDepth: 1_000,
    maxQuerySize: 262_144,
  };
}

export interface UsersConfigOptions {
  /** The database the services' and the query endpoint's users may see (CLICKHOUSE_DATABASE). */
  database: string;
  /** The administrator: migrations, the CLI, tests (CLICKHOUSE_USER, CLICKHOUSE_PASSWORD). */
  admin: { user: string; password: string };
  /** The query endpoint's user (QUERY_CLICKHOUSE_USER, QUERY_CLICKHOUSE_PASSWORD). */
  query: { user: string; password: string; maxExecutionTimeS: number; maxMemoryBytes: number };
  /** Each service's password; the replica user only in cluster mode. */
  passwords: Partial<Record<ServiceUser, string>>;
  /** The `default` user's password, which nothing uses: random, and thrown away once hashed. */
  defaultPassword: string;
  /** What the server may use in all, from which the caps follow (see serverCaps). */
  serverMemoryBytes: number;
  /** Addresses clients may connect from; the stack's own processes are all on loopback. */
  networks?: string[];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** XML text: passwords and names come from configuration, so they are escaped, never trusted. */
const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const USER_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The users file for ClickHouse 18.16 (`<yandex>`; current releases read it too). */
export function clickhouseUsersConfig(options: UsersConfigOptions): string {
  const caps = serverCaps(options.serverMemoryBytes);
  const networks = options.networks ?? ['127.0.0.1', '::1'];
  for (const [name, password] of [[options.admin.user, options.admin.password], [options.query.user, options.query.password]] as const) {
    if (!USER_NAME.test(name)) throw new Error(`ClickHouse user name ${JSON.stringify(name)} is not a plain identifier`);
    if (password === '') throw new Error(`ClickHouse user ${name} has no password: every user of the stack needs one`);
  }
  const names = [options.admin.user, options.query.user, 'default', ...Object.values(SERVICE_USERS)];
  if (new Set(names).size !== names.length) throw new Error(`ClickHouse user names must differ: ${names.join(', ')}`);

  const user = (name: string, password: string, profile: string, databases: string[] | null) =>
    [
      `    <${name}>`,
      `      <password_sha256_hex>${sha256(password)}</password_sha256_hex>`,
      `      <networks replace="replace">${networks.map((ip) => `<ip>${xml(ip)}</ip>`).join('')}</networks>`,
      `      <profile>${profile}</profile>`,
      `      <quota>default</quota>`,
      ...(databases === null ? [] : [`      <allow_databases>${databases.map((d) => `<database>${xml(d)}</database>`).join('')}</allow_databases>`]),
      `    </${name}>`,
    ].join('\n');
  const services = (Object.entries(SERVICE_USERS) as [ServiceUser, string][]).flatMap(([service, name]) => {
    const password = options.passwords[service];
    if (password === undefined) return [];
    if (password === '') throw new Error(`ClickHouse user ${name} has no password`);
    // The replica user runs what another server's Distributed table sends: its databases are
    // every database the cluster's tables live in (a test's or benchmark's too), so none is named.
    const profile = service === 'worker' ? 'tributary_mutations' : 'tributary_writes';
    return [user(name, password, profile, service === 'replica' ? null : [options.database])];
  });

  return `<?xml version="1.0"?>
<!-- Written by infra/clickhouse/clickhouse.sh at each start (packages/clickhouse/src/users-config.ts); edits are lost. -->
<yandex>
  <profiles>
    <!-- Every profile starts from this one, and the server's own work (merges, distributed DDL) runs with it. -->
    <default>
      <max_memory_usage>${caps.maxMemoryUsage}</max_memory_usage>
      <max_memory_usage_for_all_queries>${caps.maxMemoryUsageForAllQueries}</max_memory_usage_for_all_queries>
      <max_ast_elements>${caps.maxAstElements}</max_ast_elements>
      <max_expanded_ast_elements>${caps.maxExpandedAstElements}</max_expanded_ast_elements>
      <max_ast_depth>${caps.maxAstDepth}</max_ast_depth>
      <max_query_size>${caps.maxQuerySize}</max_query_size>
    </default>
    <!-- Inserts and reads, no DDL (CREATE, DROP, ALTER, RENAME, TRUNCATE, DETACH). -->
    <tributary_writes>
      <profile>default</profile>
      <allow_ddl>0</allow_ddl>
    </tributary_writes>
    <!-- 18.16 counts ALTER TABLE ... DELETE as DDL: the deletion batch needs it, so DDL is not refused here. -->
    <tributary_mutations>
      <profile>default</profile>
    </tributary_mutations>
    <!-- The query endpoint: reads only, settings allowed (readonly 2), with its own limits. -->
    <tributary_query>
      <profile>default</profile>
      <readonly>2</readonly>
      <allow_ddl>0</allow_ddl>
      <max_execution_time>${options.query.maxExecutionTimeS}</max_execution_time>
      <max_memory_usage>${Math.min(options.query.maxMemoryBytes, caps.queryUserMaxMemory)}</max_memory_usage>
      <max_memory_usage_for_user>${caps.queryUserMaxMemory}</max_memory_usage_for_user>
    </tributary_query>
    <!-- The default user's: nothing is meant to use it. -->
    <tributary_locked>
      <profile>default</profile>
      <readonly>1</readonly>
      <allow_ddl>0</allow_ddl>
    </tributary_locked>
  </profiles>
  <users>
    <!-- Clients that name no user are this one: a password nobody knows, read-only, the system database alone. -->
${user('default', options.defaultPassword, 'tributary_locked', ['system'])}
    <!-- Migrations, the CLI and the tests. -->
${user(options.admin.user, options.admin.password, 'default', null)}
${user(options.query.user, options.query.password, 'tributary_query', [options.database])}
${services.join('\n')}
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
`;
}
