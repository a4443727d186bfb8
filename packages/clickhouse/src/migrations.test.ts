import { loadMigrations, splitStatements } from './migrations.js';

describe('ClickHouse migrations', () => {
  it('splits a file into statements on a semicolon at the end of a line, without comments', () => {
    expect(splitStatements("-- why\nCREATE TABLE a (x String);\n\nCREATE TABLE b (y String);\n")).toEqual([
      'CREATE TABLE a (x String)',
      'CREATE TABLE b (y String)',
    ]);
  });

  it('keeps semicolons inside a line', () => {
    expect(splitStatements("SELECT ';' AS x;")).toEqual(["SELECT ';' AS x"]);
  });

  it('numbers the shipped migrations in order, each re-runnable', async () => {
    const migrations = await loadMigrations();
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
    // 18.16 has no IF NOT EXISTS for columns: a new default is idempotent, an added column is tolerated (see runStatement).
    for (const statement of migrations.flatMap((m) => m.statements)) {
      expect(statement).toMatch(/IF NOT EXISTS|^ALTER TABLE \w+ (MODIFY|ADD) COLUMN \w+ [\w(')]+ DEFAULT /);
    }
  });
});
