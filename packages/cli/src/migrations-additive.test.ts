import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR as CLICKHOUSE_MIGRATIONS } from '@tributary/clickhouse';
import { MIGRATIONS_DIR } from '@tributary/postgres';

/**
 * During a rolling upgrade the previous release's processes run against the new schema until they
 * are replaced (docs/production.md, "Upgrades"), so a migration may only add: tables, indexes,
 * and columns that old writers, which do not name them, can leave to a default. Dropping,
 * renaming or retyping waits for the release after the one that stopped using the thing.
 */
const upSection = (text: string) => text.split(/^-- Down Migration/m)[0]!.replace(/^\s*--.*$/gm, '');
const statements = (text: string) => text.split(/;\s*$/m).map((s) => s.trim()).filter(Boolean);

const REMOVES = /\b(DROP|RENAME|TRUNCATE)\b|\bDELETE\s+FROM\b|\bALTER\s+COLUMN\s+\w+\s+(TYPE|SET\s+NOT\s+NULL)\b/i;
/** An added column an old writer cannot leave out: NOT NULL without a default. */
const addedColumns = (statement: string) => [...statement.matchAll(/\bADD\s+COLUMN\s+([^,]+)/gi)].map((m) => m[1]!);
const oldWritersFail = (column: string) => /\bNOT\s+NULL\b/i.test(column) && !/\bDEFAULT\b|\bbigserial\b|\bserial\b/i.test(column);

function problems(dir: string, up: (text: string) => string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .flatMap((file) =>
      statements(up(readFileSync(path.join(dir, file), 'utf8')))
        .filter((statement) => REMOVES.test(statement) || addedColumns(statement).some(oldWritersFail))
        .map((statement) => `${file}: ${statement.slice(0, 120)}`),
    );
}

describe('migrations only add, so the previous release keeps working against the new schema', () => {
  it('Postgres migrations drop, rename and retype nothing, and add no column an old insert cannot leave out', () => {
    expect(problems(MIGRATIONS_DIR, upSection)).toEqual([]);
  });

  it('ClickHouse migrations likewise', () => {
    expect(problems(CLICKHOUSE_MIGRATIONS, (text) => text.replace(/^\s*--.*$/gm, ''))).toEqual([]);
  });

  it('would refuse the changes that break an older release', () => {
    const check = (statement: string) => REMOVES.test(statement) || addedColumns(statement).some(oldWritersFail);
    expect(check('ALTER TABLE users DROP COLUMN is_staff')).toBe(true);
    expect(check('ALTER TABLE users RENAME COLUMN email TO mail')).toBe(true);
    expect(check('ALTER TABLE users ALTER COLUMN email TYPE varchar(10)')).toBe(true);
    expect(check('ALTER TABLE users ADD COLUMN plan text NOT NULL')).toBe(true);
    expect(check("ALTER TABLE users ADD COLUMN plan text NOT NULL DEFAULT 'free'")).toBe(false);
    expect(check('ALTER TABLE users ADD COLUMN note text')).toBe(false);
  });
});
