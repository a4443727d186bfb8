/**
 * Writes infra/clickhouse/docker-users.xml, docker-compose's ClickHouse users, from
 * packages/clickhouse/src/users-config.ts (composeUsersConfig), the source of the local stack's
 * users file too. packages/clickhouse's users-config test fails until the committed file is this.
 * Run: npx tsx infra/clickhouse/docker-users-file.ts
 */
import { writeFileSync } from 'node:fs';
import { composeUsersConfig } from '@tributary/clickhouse';

writeFileSync(new URL('docker-users.xml', import.meta.url), composeUsersConfig());
