import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '@tributary/config';
import { SERVICE_USERS } from './users-config.js';

/**
 * The second line of defence: whatever SQL reaches ClickHouse, its users' rights bound what it can
 * do (docs/security.md, "Service and store"). Run against the stack `make up` started: its
 * server's users file (infra/clickhouse/clickhouse.sh), the config's credentials, and the service
 * passwords it keeps in the state folder.
 */
const config = loadConfig();
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const stateDir = process.env.TRIBUTARY_STATE_DIR ?? path.join(root, '.tributary');

const servicePasswords = new Map(
  readFileSync(path.join(stateDir, 'clickhouse-users.env'), 'utf8')
    .split('\n')
    .map((line) => /^(\w+)_CLICKHOUSE_PASSWORD='([^']*)'$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!.toLowerCase(), m[2]!]),
);

interface Answer {
  ok: boolean;
  /** ClickHouse's error code, when it refused. */
  code: number | null;
  text: string;
}

/** One statement over HTTP as `user` (none: anonymous), with `settings` as URL parameters. */
async function run(user: string | null, password: string, statement: string, settings: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(config.clickhouseUrl);
  for (const [name, value] of Object.entries(settings)) url.searchParams.set(name, value);
  const headers: Record<string, string> = user === null ? {} : { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
  const response = await fetch(url, { method: 'POST', headers, body: statement });
  const text = await response.text();
  const code = /Code: (\d+)/.exec(text)?.[1];
  return { ok: response.ok, code: code === undefined ? null : Number(code), text };
}

const admin = (statement: string) => run(config.clickhouseUser, config.clickhousePassword, statement);
const query = (statement: string, settings?: Record<string, string>) => run(config.queryClickhouseUser, config.queryClickhousePassword, statement, settings);

// ClickHouse's codes: 164 readonly, 192-194 and 516 unknown user or wrong or missing password, 291 database access denied, 392 DDL prohibited.
const REFUSED_LOGIN = [192, 193, 194, 516];
const READONLY = 164;
const DATABASE_DENIED = 291;
const DDL_PROHIBITED = 392;

const suffix = randomBytes(4).toString('hex');
const otherDatabase = `store_users_${suffix}`;
const table = `${config.clickhouseDatabase}.store_users_${suffix}`;

beforeAll(async () => {
  for (const statement of [`CREATE DATABASE ${otherDatabase}`, `CREATE TABLE ${otherDatabase}.secrets (a UInt8) ENGINE = Memory`, `CREATE TABLE ${table} (a UInt8) ENGINE = MergeTree ORDER BY a`]) {
    expect(await admin(statement)).toMatchObject({ ok: true });
  }
});
afterAll(async () => {
  await admin(`DROP TABLE IF EXISTS ${table}`);
  await admin(`DROP DATABASE IF EXISTS ${otherDatabase}`);
});

describe('no ClickHouse user without a password', () => {
  it('refuses the default user without a password, and a client that names no user', async () => {
    const asDefault = await run('default', '', 'SELECT 1');
    expect(asDefault.ok).toBe(false);
    expect(REFUSED_LOGIN).toContain(asDefault.code);
    const anonymous = await run(null, '', 'SELECT 1');
    expect(anonymous.ok).toBe(false);
    expect(REFUSED_LOGIN).toContain(anonymous.code);
  });

  it('lets each user in with its password, and refuses it without one or with another', async () => {
    const users = [
      [config.clickhouseUser, config.clickhousePassword],
      [config.queryClickhouseUser, config.queryClickhousePassword],
      ...(['ingest', 'api', 'worker'] as const).map((service) => [SERVICE_USERS[service], servicePasswords.get(service)!] as const),
    ];
    for (const [user, password] of users) {
      expect({ user, password: Boolean(password) }).toEqual({ user, password: true });
      expect({ user, answer: (await run(user, password, 'SELECT 1')).text.trim() }).toEqual({ user, answer: '1' });
      for (const wrong of ['', `${password}x`]) {
        const refused = await run(user, wrong, 'SELECT 1');
        expect({ user, wrong, refused: refused.ok === false && REFUSED_LOGIN.includes(refused.code ?? 0) }).toEqual({ user, wrong, refused: true });
      }
    }
  });
});

describe("the query endpoint's user reads, and changes settings, only", () => {
  it.each([
    ['INSERT', `INSERT INTO ${table} VALUES (1)`],
    ['CREATE', `CREATE TABLE ${table}_new (a UInt8) ENGINE = Memory`],
    ['DROP', `DROP TABLE ${table}`],
    ['TRUNCATE', `TRUNCATE TABLE ${table}`],
    ['ALTER (a mutation)', `ALTER TABLE ${table} DELETE WHERE 1`],
    ['ALTER (a column)', `ALTER TABLE ${table} ADD COLUMN b UInt8`],
    ['OPTIMIZE', `OPTIMIZE TABLE ${table}`],
    ['CREATE DATABASE', `CREATE DATABASE ${otherDatabase}_new`],
  ])('is refused %s: ClickHouse is read-only for it', async (_, statement) => {
    expect(await query(statement)).toMatchObject({ ok: false, code: READONLY });
  });

  it('may not lift read-only mode with a setting', async () => {
    expect(await query('SELECT 1', { readonly: '0' })).toMatchObject({ ok: false, code: READONLY });
  });

  it('selects from the tributary database with the settings the api sends', async () => {
    const answer = await query(`SELECT count() FROM ${table}`, { readonly: '2', max_threads: '1', max_execution_time: '5', max_memory_usage: String(1024 ** 3) });
    expect(answer).toMatchObject({ ok: true, text: '0\n' });
  });

  it('reads no other database, by name or through a table function', async () => {
    for (const statement of [
      `SELECT count() FROM ${otherDatabase}.secrets`,
      `SELECT 1 WHERE 1 IN ${otherDatabase}.secrets`,
      `SELECT count() FROM merge('${otherDatabase}', '.*')`,
      `SELECT count() FROM remote('127.0.0.1', ${otherDatabase}.secrets)`,
    ]) {
      expect({ statement, answer: await query(statement) }).toEqual({ statement, answer: expect.objectContaining({ ok: false, code: DATABASE_DENIED }) });
    }
  });

  it('still reads the system database, which ClickHouse 18.16 opens to every user (docs/security.md says what that exposes)', async () => {
    expect(await query('SELECT count() FROM system.one')).toMatchObject({ ok: true, text: '1\n' });
  });
});

describe("each service's user does what its service does, and no DDL", () => {
  const as = (service: 'ingest' | 'api' | 'worker', statement: string) => run(SERVICE_USERS[service], servicePasswords.get(service)!, statement);

  it('lets ingest and the api insert, and refuses them CREATE, DROP and ALTER', async () => {
    for (const service of ['ingest', 'api'] as const) {
      expect({ service, answer: await as(service, `INSERT INTO ${table} VALUES (1)`) }).toEqual({ service, answer: expect.objectContaining({ ok: true }) });
      for (const statement of [`CREATE TABLE ${table}_${service} (a UInt8) ENGINE = Memory`, `DROP TABLE ${table}`, `ALTER TABLE ${table} DELETE WHERE 1`, `TRUNCATE TABLE ${table}`]) {
        expect({ service, statement, answer: await as(service, statement) }).toEqual({ service, statement, answer: expect.objectContaining({ ok: false, code: DDL_PROHIBITED }) });
      }
    }
  });

  it("lets the worker run the deletion batch's mutation", async () => {
    expect(await as('worker', `ALTER TABLE ${table} DELETE WHERE a = 2`)).toMatchObject({ ok: true });
  });

  it('keeps every service user to the tributary database', async () => {
    for (const service of ['ingest', 'api', 'worker'] as const) {
      expect({ service, answer: await as(service, `SELECT count() FROM ${otherDatabase}.secrets`) }).toEqual({ service, answer: expect.objectContaining({ ok: false, code: DATABASE_DENIED }) });
    }
  });
});

describe("ClickHouse's ports", () => {
  it('listen on loopback only: every socket the server listens on, HTTP, native and interserver', () => {
    const port = new URL(config.clickhouseUrl).port || '8123';
    const listening = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' }).split('\n').filter(Boolean);
    const pid = listening.map((line) => (line.split(/\s+/)[3]!.endsWith(`:${port}`) ? /pid=(\d+)/.exec(line)?.[1] : undefined)).find(Boolean);
    expect(pid).toBeDefined();
    const addresses = listening.filter((line) => line.includes(`pid=${pid},`)).map((line) => line.split(/\s+/)[3]!);
    expect(addresses.length).toBeGreaterThanOrEqual(3);
    for (const address of addresses) expect(address).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/);
  });
});
