import { sql } from './sql.js';
import type { ClickHouse } from './client.js';

/** The ClickHouse release a client talks to, as `SELECT version()` names it. */
export interface ClickHouseServer {
  version: string;
  major: number;
  minor: number;
}

export function parseServerVersion(version: string): ClickHouseServer {
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) throw new Error(`ClickHouse answered version() with ${JSON.stringify(version)}, not a release number`);
  return { version, major: Number(match[1]), minor: Number(match[2]) };
}

/** The oldest release Tributary runs on (the local stack's and CI's): what SQL printed without asking must run on. */
export const CLICKHOUSE_18_16: ClickHouseServer = parseServerVersion('18.16');

/** Whether `server` is `major.minor` or newer. */
export const isAtLeast = (server: ClickHouseServer, major: number, minor: number): boolean => server.major > major || (server.major === major && server.minor >= minor);

const servers = new WeakMap<ClickHouse, Promise<ClickHouseServer>>();

/**
 * The release `clickhouse` talks to, asked once per client: an upgrade restarts the server, and
 * the services with it. A failed ask is not kept, so the next query asks again.
 */
export function serverOf(clickhouse: ClickHouse): Promise<ClickHouseServer> {
  let server = servers.get(clickhouse);
  if (!server) {
    server = clickhouse.query<{ version: string }>(sql`SELECT version() AS version`).then(([row]) => parseServerVersion(String(row?.version)));
    server.catch(() => servers.delete(clickhouse));
    servers.set(clickhouse, server);
  }
  return server;
}
