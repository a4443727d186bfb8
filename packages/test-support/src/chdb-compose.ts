import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'chdb';
import { COMPOSE_CLICKHOUSE, COMPOSE_ROLES, composePasswordVariable, loadMigrations } from '@tributary/clickhouse';
import { wrapError } from './chdb-clickhouse.js';

/**
 * docker-compose's ClickHouse configuration loaded into a current ClickHouse (chdb's in-process
 * 26.x) as the image loads it: infra/clickhouse/docker-config.xml (and, in cluster mode,
 * infra/cluster/docker/clickhouse-cluster.xml) in config.d, infra/clickhouse/docker-users.xml (and
 * clickhouse-cluster-users.xml) in users.d beside a users.xml standing in for the image's own.
 *
 * What chdb cannot model: it has no network client and always logs in as `default` without a
 * password. So a session "as" a compose user is one where a last users.d file gives `default`
 * that user's element from docker-users.xml, unchanged but for its password (none) and networks
 * (any): its profile, settings, constraints, readonly level, `allow_ddl` and `allow_databases`
 * are the file's. Passwords and networks are not tested here (packages/clickhouse's users-config
 * test reads them), nor is anything that needs other servers or ZooKeeper (Distributed and
 * Replicated tables): cluster mode's topology and macros are loaded, not run.
 */
export interface ComposeClickHouse {
  /** One statement's TabSeparated answer; a refusal throws a `ClickHouseError` with its code. */
  run(statement: string): string;
  close(): void;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** Every file docker-compose.yml mounts into a ClickHouse server, by where it goes in the image. */
export const COMPOSE_CLICKHOUSE_FILES = {
  config: 'infra/clickhouse/docker-config.xml',
  users: 'infra/clickhouse/docker-users.xml',
  clusterConfig: 'infra/cluster/docker/clickhouse-cluster.xml',
  clusterUsers: 'infra/cluster/docker/clickhouse-cluster-users.xml',
} as const;
export const readComposeFile = (file: keyof typeof COMPOSE_CLICKHOUSE_FILES) => readFileSync(path.join(root, COMPOSE_CLICKHOUSE_FILES[file]), 'utf8');

/** The image's own users.xml, as far as it matters here: an empty default profile and quota, and the `default` user docker-users.xml replaces. */
const IMAGE_USERS = `<clickhouse>
  <profiles><default/></profiles>
  <users><default><password/><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default/></quotas>
</clickhouse>
`;

/** What docker-compose.yml gives every server: each password (any: chdb logs in without one), and in cluster mode clickhouse-1's place. */
const COMPOSE_ENVIRONMENT: Record<string, string> = {
  ...Object.fromEntries(COMPOSE_ROLES.map((role) => [composePasswordVariable(role), 'unused'])),
  SHARD: '01',
  REPLICA: 'clickhouse-1',
};

/** `user`'s element in docker-users.xml, as the `default` chdb logs in as. */
function loginAs(user: string): string {
  const users = /<users>([\s\S]*?)<\/users>/.exec(readComposeFile('users'))?.[1] ?? '';
  const element = new RegExp(`<${user}(?: [^>]*)?>([\\s\\S]*?)</${user}>`).exec(users)?.[1];
  if (element === undefined) throw new Error(`${COMPOSE_CLICKHOUSE_FILES.users} has no user ${user}`);
  const body = element.replace(/<password [^>]*\/>/, '<password/>').replace(/<networks>.*?<\/networks>/, '<networks><ip>::/0</ip></networks>');
  return `<clickhouse><users><default replace="replace">${body}</default></users></clickhouse>\n`;
}

/**
 * A session on `dataDir` as compose's `user` (an empty directory is a new server; the same one
 * again is the same server, restarted as another user). Only one may be open in a process.
 */
export function openComposeClickHouse(options: { user: string; dataDir: string; cluster?: boolean }): ComposeClickHouse {
  const etc = mkdtempSync(path.join(tmpdir(), 'tributary-compose-etc-'));
  mkdirSync(path.join(etc, 'config.d'));
  mkdirSync(path.join(etc, 'users.d'));
  writeFileSync(path.join(etc, 'config.xml'), `<clickhouse><users_config>${path.join(etc, 'users.xml')}</users_config></clickhouse>\n`);
  writeFileSync(path.join(etc, 'users.xml'), IMAGE_USERS);
  // The server reads `from_env` from its own environment, which a jest worker's process.env does
  // not reach: the values docker-compose.yml gives every server are put in their place instead.
  const mount = (file: keyof typeof COMPOSE_CLICKHOUSE_FILES, target: string) =>
    writeFileSync(path.join(etc, target), readComposeFile(file).replace(/<(\w+) from_env="(\w+)" ?\/>/g, (_, element: string, name: string) => `<${element}>${COMPOSE_ENVIRONMENT[name] ?? ''}</${element}>`));
  mount('config', 'config.d/tributary.xml');
  mount('users', 'users.d/tributary.xml');
  if (options.cluster) {
    mount('clusterConfig', 'config.d/cluster.xml');
    mount('clusterUsers', 'users.d/cluster.xml');
  }
  writeFileSync(path.join(etc, 'users.d/zz-login.xml'), loginAs(options.user));

  const session = new Session(options.dataDir, { connectionArgs: [`--config-file=${path.join(etc, 'config.xml')}`] });
  return {
    run(statement: string): string {
      try {
        return session.query(statement, 'TabSeparated');
      } catch (error) {
        throw wrapError(error);
      }
    },
    close(): void {
      session.close();
      rmSync(etc, { recursive: true, force: true });
    },
  };
}

/**
 * A new server's data directory with the database migrated by the administrator, as compose's
 * migrate job leaves it (the migrations in their single-node form); `rmSync` it when done.
 */
export async function createComposeData(): Promise<string> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'tributary-compose-data-'));
  const server = openComposeClickHouse({ user: COMPOSE_CLICKHOUSE.admin, dataDir });
  try {
    server.run(`CREATE DATABASE ${COMPOSE_CLICKHOUSE.database}`);
    server.run(`USE ${COMPOSE_CLICKHOUSE.database}`);
    for (const migration of await loadMigrations()) for (const statement of migration.statements) server.run(statement);
  } finally {
    server.close();
  }
  return dataDir;
}
