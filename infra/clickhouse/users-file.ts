/**
 * Writes a ClickHouse server's users file (packages/clickhouse/src/users-config.ts): the
 * administrator and the query endpoint's user with the config's credentials (CLICKHOUSE_USER,
 * QUERY_CLICKHOUSE_USER and their passwords), each service's user with the password
 * infra/clickhouse/clickhouse.sh generated for this state folder, and the replica user in
 * cluster mode (CLICKHOUSE_CLUSTER set).
 * Run: npx tsx infra/clickhouse/users-file.ts PASSWORDS_ENV OUT_FILE SERVER_MEMORY_BYTES
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { clickhouseUsersConfig, SERVICE_USERS, type ServiceUser } from '@tributary/clickhouse';
import { loadConfig } from '@tributary/config';

const [passwordsFile, out, memory] = process.argv.slice(2);
if (!passwordsFile || !out || !memory) throw new Error('usage: users-file.ts PASSWORDS_ENV OUT_FILE SERVER_MEMORY_BYTES');

const config = loadConfig();
const values = new Map(
  readFileSync(passwordsFile, 'utf8')
    .split('\n')
    .map((line) => /^(\w+)='([^']*)'$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, m[2]!]),
);
const passwords: Partial<Record<ServiceUser, string>> = {};
for (const service of Object.keys(SERVICE_USERS) as ServiceUser[]) {
  if (service === 'replica' && config.clickhouseCluster === '') continue;
  const password = values.get(`${service.toUpperCase()}_CLICKHOUSE_PASSWORD`);
  if (!password) throw new Error(`${passwordsFile} has no ${service.toUpperCase()}_CLICKHOUSE_PASSWORD`);
  passwords[service] = password;
}

const text = clickhouseUsersConfig({
  database: config.clickhouseDatabase,
  admin: { user: config.clickhouseUser, password: config.clickhousePassword },
  query: { user: config.queryClickhouseUser, password: config.queryClickhousePassword, maxExecutionTimeS: config.queryMaxExecutionTimeS, maxMemoryBytes: config.queryMaxMemoryBytes },
  passwords,
  defaultPassword: randomBytes(32).toString('hex'),
  serverMemoryBytes: Number(memory),
});
// Whole or not at all: the server rereads its users file when it changes.
writeFileSync(`${out}.next`, text, { mode: 0o600 });
renameSync(`${out}.next`, out);
