import { CLICKHOUSE_18_16, isAtLeast, type ClickHouseServer } from '@tributary/clickhouse';
import { queryError, spanOf } from './errors.js';

/**
 * What HogQL offers that only newer ClickHouse releases run, and the release each needs. The
 * printer prints for the server it talks to (`PrintOptions.server`, read once per client with
 * `serverOf`): on an older one a query using these is refused with a 400 that names the release
 * it needs, rather than sent to fail with ClickHouse's own error.
 */
const FEATURES = {
  windowFunctions: { what: 'window functions (OVER, WINDOW)', since: [21, 9] },
  jsonFunctions: { what: 'JSONExtract functions', since: [20, 1] },
  manyJoins: { what: 'more than two tables in one SELECT', since: [20, 1] },
  materializeColumn: { what: 'MATERIALIZE COLUMN', since: [21, 10] },
} as const satisfies Record<string, { what: string; since: [number, number] }>;

export type ServerFeature = keyof typeof FEATURES;

export const has = (server: ClickHouseServer, feature: ServerFeature): boolean => isAtLeast(server, FEATURES[feature].since[0], FEATURES[feature].since[1]);

export function requireFeature(server: ClickHouseServer, feature: ServerFeature, node: Parameters<typeof spanOf>[0]): void {
  if (has(server, feature)) return;
  const { what, since } = FEATURES[feature];
  throw queryError(`${what} need ClickHouse ${since.join('.')} or newer; this server is ${server.version}`, spanOf(node));
}

/**
 * Whether the printer takes the roundabout forms of `clickhouse-18-16.ts` that work around 18.16's
 * bugs (a bare right-hand join key read wrongly): 19.x and later read the plain forms right.
 */
export const hasLegacyBugs = (server: ClickHouseServer): boolean => !isAtLeast(server, 19, 1);

export { CLICKHOUSE_18_16, type ClickHouseServer };
