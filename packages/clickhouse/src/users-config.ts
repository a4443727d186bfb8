import { createHash } from 'node:crypto';
import { ENV_VARIABLES } from '@tributary/config';

/**
 * ClickHouse's users, one source for both kinds of server: the users file for the stacks Tributary
 * starts itself (`make up`, cluster mode, the chaos stack; ClickHouse 18.16), and docker-compose's
 * infra/clickhouse/docker-users.xml (a current LTS release), which is this module's rendering,
 * committed. Both have one user per client with a password, the least rights 18.16 can express
 * (a readonly level, `allow_ddl`, `allow_databases`, networks) and the caps in the profile every
 * user starts from. 18.16 has no GRANT, no setting constraints and no per-table rights:
 * docs/security.md ("Service and store") says what that leaves open. The current release's file
 * adds constraints, so that the query endpoint's user cannot raise its own limits.
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

/** A profile's settings as `[name, value]`, in the order they are written. */
type Settings = [string, number | string][];

interface Profile {
  name: string;
  comment: string;
  settings: Settings;
  /** Settings the profile's users may not change (`const`) or raise past a value (`max`); current releases only. */
  constraints: [string, { max: number } | 'const'][];
}

interface User {
  name: string;
  /** Who it is for, written above it when there is something to say. */
  comment?: string;
  /** Its password, or the name of the environment variable the server reads it from (compose). */
  password: { text: string } | { env: string };
  profile: string;
  /** The databases it may see; null: every one. */
  databases: string[] | null;
}

/**
 * The profiles, for 18.16 (`current` false) or a current release: the same names and the same
 * limits on both. What differs is what each release can express: 18.16 caps all queries together
 * with a setting (`max_memory_usage_for_all_queries`, obsolete and ignored since 20.x, where the
 * server setting `max_server_memory_usage_to_ram_ratio` does it: infra/clickhouse/docker-config.xml),
 * and only a current release can hold a user to its limits (`constraints`).
 */
function profiles(caps: ServerCaps, query: UsersConfigOptions['query'], current: boolean): Profile[] {
  const ast: Settings = [
    ['max_ast_elements', caps.maxAstElements],
    ['max_expanded_ast_elements', caps.maxExpandedAstElements],
    ['max_ast_depth', caps.maxAstDepth],
    ['max_query_size', caps.maxQuerySize],
  ];
  const queryMemory = Math.min(query.maxMemoryBytes, caps.queryUserMaxMemory);
  return [
    {
      name: 'default',
      comment: 'Every profile starts from this one, and the server\'s own work (merges, distributed DDL) runs with it.',
      settings: [['max_memory_usage', caps.maxMemoryUsage], ...(current ? [] : [['max_memory_usage_for_all_queries', caps.maxMemoryUsageForAllQueries] as [string, number]]), ...ast],
      constraints: [],
    },
    { name: 'tributary_writes', comment: 'Inserts and reads, no DDL (CREATE, DROP, ALTER, RENAME, TRUNCATE, DETACH).', settings: [['allow_ddl', 0]], constraints: [] },
    {
      name: 'tributary_mutations',
      comment: 'ALTER TABLE ... DELETE counts as DDL (on 18.16 as on current releases): the deletion batch needs it, so DDL is not refused here.',
      settings: [],
      constraints: [],
    },
    {
      name: 'tributary_query',
      comment: current
        ? 'The query endpoint: reads only, settings allowed (readonly 2), with its own limits, which it may lower but not raise past what the api sends (QUERY_MAX_EXECUTION_TIME_S, QUERY_MAX_MEMORY_BYTES).'
        : 'The query endpoint: reads only, settings allowed (readonly 2), with its own limits.',
      settings: [
        ['readonly', 2],
        ['allow_ddl', 0],
        ['max_execution_time', query.maxExecutionTimeS],
        ['max_memory_usage', queryMemory],
        ['max_memory_usage_for_user', caps.queryUserMaxMemory],
      ],
      constraints: current
        ? [
            ['max_execution_time', { max: query.maxExecutionTimeS }],
            ['max_memory_usage', { max: queryMemory }],
            ['max_memory_usage_for_user', 'const'],
            ...ast.map(([name]) => [name, 'const'] as [string, 'const']),
          ]
        : [],
    },
    { name: 'tributary_locked', comment: 'The default user\'s: nothing is meant to use it.', settings: [['readonly', 1], ['allow_ddl', 0]], constraints: [] },
  ];
}

/** The users both files have, by what they are for; every service's only when it has a password. */
function users(options: UsersConfigOptions, services: Partial<Record<ServiceUser, User['password']>>, defaultPassword: User['password'], admin: User['password'], query: User['password']): User[] {
  return [
    { name: 'default', comment: 'Clients that name no user are this one: a password no client is given, read-only, the system database alone.', password: defaultPassword, profile: 'tributary_locked', databases: ['system'] },
    { name: options.admin.user, comment: 'Migrations, the CLI and the tests.', password: admin, profile: 'default', databases: null },
    { name: options.query.user, password: query, profile: 'tributary_query', databases: [options.database] },
    ...(Object.entries(SERVICE_USERS) as [ServiceUser, string][]).flatMap(([service, name]): User[] => {
      const password = services[service];
      if (password === undefined) return [];
      // The replica user runs what another server's Distributed table sends: its databases are
      // every database the cluster's tables live in (a test's or benchmark's too), so none is named.
      return [{ name, password, profile: service === 'worker' ? 'tributary_mutations' : 'tributary_writes', databases: service === 'replica' ? null : [options.database] }];
    }),
  ];
}

function checkNames(options: UsersConfigOptions): void {
  for (const name of [options.admin.user, options.query.user]) if (!USER_NAME.test(name)) throw new Error(`ClickHouse user name ${JSON.stringify(name)} is not a plain identifier`);
  const names = [options.admin.user, options.query.user, 'default', ...Object.values(SERVICE_USERS)];
  if (new Set(names).size !== names.length) throw new Error(`ClickHouse user names must differ: ${names.join(', ')}`);
}

function renderProfiles(list: Profile[]): string {
  return list
    .map((profile) => {
      const constraints = profile.constraints.map(([name, rule]) => `        <${name}>${rule === 'const' ? '<const/>' : `<max>${rule.max}</max>`}</${name}>`);
      return [
        `    <!-- ${profile.comment} -->`,
        `    <${profile.name}>`,
        ...(profile.name === 'default' ? [] : ['      <profile>default</profile>']),
        ...profile.settings.map(([name, value]) => `      <${name}>${value}</${name}>`),
        ...(constraints.length === 0 ? [] : ['      <constraints>', ...constraints, '      </constraints>']),
        `    </${profile.name}>`,
      ].join('\n');
    })
    .join('\n');
}

/** One user's element; `replace` drops what an earlier file (the image's own users.xml) gave the same user. */
function renderUser(user: User, networks: string[], networksReplace: boolean, replace: boolean): string {
  const password = 'env' in user.password ? `<password from_env="${user.password.env}"/>` : `<password_sha256_hex>${sha256(user.password.text)}</password_sha256_hex>`;
  return [
    ...(user.comment === undefined ? [] : [`    <!-- ${user.comment} -->`]),
    `    <${user.name}${replace ? ' replace="replace"' : ''}>`,
    `      ${password}`,
    `      <networks${networksReplace ? ' replace="replace"' : ''}>${networks.map((ip) => `<ip>${xml(ip)}</ip>`).join('')}</networks>`,
    `      <profile>${user.profile}</profile>`,
    `      <quota>default</quota>`,
    ...(user.databases === null ? [] : [`      <allow_databases>${user.databases.map((d) => `<database>${xml(d)}</database>`).join('')}</allow_databases>`]),
    `    </${user.name}>`,
  ].join('\n');
}

/** The users file for ClickHouse 18.16 (`<yandex>`; current releases read it too). */
export function clickhouseUsersConfig(options: UsersConfigOptions): string {
  checkNames(options);
  for (const [name, password] of [[options.admin.user, options.admin.password], [options.query.user, options.query.password]] as const) {
    if (password === '') throw new Error(`ClickHouse user ${name} has no password: every user of the stack needs one`);
  }
  const services: Partial<Record<ServiceUser, User['password']>> = {};
  for (const [service, password] of Object.entries(options.passwords) as [ServiceUser, string | undefined][]) {
    if (password === undefined) continue;
    if (password === '') throw new Error(`ClickHouse user ${SERVICE_USERS[service]} has no password`);
    services[service] = { text: password };
  }
  const list = users(options, services, { text: options.defaultPassword }, { text: options.admin.password }, { text: options.query.password });
  const networks = options.networks ?? ['127.0.0.1', '::1'];

  return `<?xml version="1.0"?>
<!-- Written by infra/clickhouse/clickhouse.sh at each start (packages/clickhouse/src/users-config.ts); edits are lost. -->
<yandex>
  <profiles>
${renderProfiles(profiles(serverCaps(options.serverMemoryBytes), options.query, false))}
  </profiles>
  <users>
${list.map((user) => renderUser(user, networks, true, false)).join('\n')}
  </users>
  <quotas>
    <default>
      <interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval>
    </default>
  </quotas>
</yandex>
`;
}

/**
 * docker-compose's ClickHouse: its users' settings (database, the memory one server is given, the
 * query endpoint's limits) are docker-compose.yml's and the config's defaults, which
 * packages/config's docker-compose test checks.
 */
export const COMPOSE_CLICKHOUSE = {
  database: 'tributary',
  admin: 'tributary_admin',
  query: { user: 'tributary_query', maxExecutionTimeS: Number(ENV_VARIABLES.queryMaxExecutionTimeS[1]), maxMemoryBytes: Number(ENV_VARIABLES.queryMaxMemoryBytes[1]) },
  /** The single server's `mem_limit` (16g); cluster mode's four get 4g each, and the server setting in docker-config.xml caps them below these profiles. */
  serverMemoryBytes: 16 * GiB,
} as const;

/** Every user of compose's ClickHouse, by what it is for. */
export type ComposeRole = 'default' | 'admin' | 'query' | ServiceUser;
export const COMPOSE_ROLES: readonly ComposeRole[] = ['default', 'admin', 'query', ...(Object.keys(SERVICE_USERS) as ServiceUser[])];

/** The environment variable compose gives each server a user's password in (docker-compose.yml, .env.example). */
export const composePasswordVariable = (role: ComposeRole) => `CLICKHOUSE_${role.toUpperCase()}_PASSWORD`;

/**
 * infra/clickhouse/docker-users.xml, which docker-compose mounts as users.d/tributary.xml on every
 * server of a current release: the users, profiles and caps of clickhouseUsersConfig for a server
 * given COMPOSE_CLICKHOUSE.serverMemoryBytes, every service's user and the replica user, passwords
 * read from the container's environment, reachable from the compose network (its ClickHouse ports
 * are not published), and the query user held to its limits by constraints.
 * Written by infra/clickhouse/docker-users-file.ts; a test checks the committed file is this.
 */
export function composeUsersConfig(): string {
  const options: UsersConfigOptions = {
    database: COMPOSE_CLICKHOUSE.database,
    admin: { user: COMPOSE_CLICKHOUSE.admin, password: '' },
    query: { ...COMPOSE_CLICKHOUSE.query, password: '' },
    passwords: {},
    defaultPassword: '',
    serverMemoryBytes: COMPOSE_CLICKHOUSE.serverMemoryBytes,
  };
  checkNames(options);
  const services = Object.fromEntries((Object.keys(SERVICE_USERS) as ServiceUser[]).map((service) => [service, { env: composePasswordVariable(service) }]));
  const list = users(options, services, { env: composePasswordVariable('default') }, { env: composePasswordVariable('admin') }, { env: composePasswordVariable('query') });
  // The default user keeps to the server's own loopback, as the image's entrypoint leaves it.
  const networksOf = (user: User) => (user.name === 'default' ? ['::1', '127.0.0.1'] : ['::/0']);

  return `<?xml version="1.0"?>
<!-- docker-compose's ClickHouse users, mounted as users.d/tributary.xml on every server. Written by
     infra/clickhouse/docker-users-file.ts from packages/clickhouse/src/users-config.ts, the source of
     the local stack's users too: edit that, then rerun the script. docs/security.md, "Service and store". -->
<clickhouse>
  <profiles>
${renderProfiles(profiles(serverCaps(options.serverMemoryBytes), options.query, true))}
  </profiles>
  <users>
${list.map((user) => renderUser(user, networksOf(user), false, user.name === 'default')).join('\n')}
  </users>
</clickhouse>
`;
}
