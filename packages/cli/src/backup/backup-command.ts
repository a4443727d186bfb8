import { access, mkdir, readFile, readdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadMigrations } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { BACKUP_FORMAT, MANIFEST_FILE, parseManifest, type BackupManifest } from './backup-manifest.js';
import { clickhouseTablesWithRows, dumpClickHouse, restoreClickHouse } from './clickhouse-backup.js';
import { dumpPostgres, postgresTablesWithRows, restorePostgres, unknownPostgresMigrations } from './postgres-backup.js';

export type BackupConfig = Pick<Config, 'databaseUrl' | 'clickhouseUrl' | 'clickhouseDatabase' | 'clickhouseUser' | 'clickhousePassword' | 'clickhouseCluster'>;

export interface BackupSummary {
  manifest: BackupManifest;
  bytes: number;
}

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw error;
  }
}

async function sizeOf(dir: string, manifest: BackupManifest): Promise<number> {
  const files = [manifest.postgres.file, ...manifest.clickhouse.tables.flatMap((t) => t.files.map((f) => f.file))];
  let bytes = 0;
  for (const file of files) bytes += (await stat(path.join(dir, file))).size;
  return bytes;
}

/**
 * Backs up what cannot be made again: Postgres (projects, keys, flags, persons, exports and their
 * schedules) and ClickHouse (events, persons, groups, warnings). Redis holds caches and BullMQ's
 * queues, whose schedules the worker registers again each time it starts; Kafka holds events
 * only until ingest has stored them. So neither is in a backup.
 */
export async function runBackup(config: BackupConfig, dir: string): Promise<BackupSummary> {
  if (!(await isEmptyOrMissing(dir))) throw new Error(`${dir} is not empty: back up into a new folder`);
  await mkdir(dir, { recursive: true });
  const postgres = await dumpPostgres(config.databaseUrl, dir);
  const clickhouse = await dumpClickHouse(config, dir);
  const manifest: BackupManifest = { format: BACKUP_FORMAT, created_at: new Date().toISOString(), postgres, clickhouse };
  await writeFile(path.join(dir, `${MANIFEST_FILE}.next`), `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(path.join(dir, `${MANIFEST_FILE}.next`), path.join(dir, MANIFEST_FILE));
  return { manifest, bytes: await sizeOf(dir, manifest) };
}

async function readManifest(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`${dir} holds no ${MANIFEST_FILE}: not a backup, or one that did not finish`);
    throw error;
  }
  const manifest = parseManifest(text);
  for (const file of [manifest.postgres.file, ...manifest.clickhouse.tables.flatMap((t) => t.files.map((f) => f.file))]) {
    await access(path.join(dir, file)).catch(() => {
      throw new Error(`the backup in ${dir} misses ${file}`);
    });
  }
  return manifest;
}

/** A backup taken by a release with migrations this one lacks cannot be read by this one's code. */
async function refuseNewerBackup(manifest: BackupManifest): Promise<void> {
  const postgres = await unknownPostgresMigrations(manifest.postgres);
  const known = new Set((await loadMigrations()).map((m) => m.version));
  const clickhouse = manifest.clickhouse.migrations.filter((version) => !known.has(version));
  if (postgres.length > 0 || clickhouse.length > 0) {
    throw new Error(
      `the backup was taken by a newer release (Postgres migrations ${postgres.join(', ') || 'none'} and ClickHouse migrations ${clickhouse.join(', ') || 'none'} are unknown here): restore it with that release`,
    );
  }
}

/**
 * Restores a backup into the configured stores: refused when either already holds rows, unless
 * `force`, which replaces them. Each store then carries this release's schema: a backup of an
 * older release is migrated as `tributary migrate` would.
 */
export async function runRestore(config: BackupConfig, dir: string, options: { force: boolean }): Promise<BackupManifest> {
  const manifest = await readManifest(dir);
  await refuseNewerBackup(manifest);
  const postgresRows = await postgresTablesWithRows(config.databaseUrl);
  const clickhouseRows = await clickhouseTablesWithRows(config);
  if (!options.force && (postgresRows.length > 0 || clickhouseRows.length > 0)) {
    const held = [
      ...(postgresRows.length > 0 ? [`Postgres (${postgresRows.join(', ')})`] : []),
      ...(clickhouseRows.length > 0 ? [`ClickHouse database ${config.clickhouseDatabase} (${clickhouseRows.join(', ')})`] : []),
    ];
    throw new Error(`refusing to restore over data: ${held.join(' and ')} already hold rows; pass --force to replace them`);
  }
  await restorePostgres(config.databaseUrl, dir, manifest.postgres);
  await restoreClickHouse(config, dir, manifest.clickhouse, clickhouseRows.length > 0);
  return manifest;
}
