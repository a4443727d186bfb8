/**
 * A bench project's events, loaded straight into ClickHouse rather than through capture: the rows
 * of `realisticEvent`'s properties made by `INSERT ... SELECT` over `numbers()`, spread evenly over
 * the days before the load, with one `person_distinct_id` row per distinct id and one `person` row
 * per person they map to. The
 * project is made once with the CLI; its id and key are kept in a state file (one project per
 * event count) and the data reused while it is complete and under a day old, since the benches'
 * queries look back from now.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Config } from '@tributary/config';
import { EVENTS_TABLE_COLUMNS, ident, sql, Sql, topologyOf, type ClickHouse } from '@tributary/clickhouse';
import { runOverrideSquash } from '@tributary/deletions';
import { createLogger } from '@tributary/logger';
import { createPool } from '@tributary/postgres';
import { realisticEvent } from './events.js';
import { STATE_DIR } from './lib.js';

export interface Dataset {
  /** Names the state file (`<slug>.json`), the project, its owner and its key. */
  slug: string;
  events: number;
  spanDays: number;
  distinctIds: number;
  /** A row's event name, as SQL of its index `number`. */
  eventSql: string;
  /** A row's distinct id's number (below `distinctIds`), as SQL of its index `number`. */
  distinctIdSql: string;
  /** The number of the person a distinct id's number `n` maps to now, as SQL; events carry `n`'s own. */
  personSql: (n: string) => string;
  /** Loads the data again even when it could be reused. */
  reload: boolean;
}

export interface BenchProject {
  projectId: number;
  personalApiKey: string;
  /** When the events were loaded (ms): they span the `spanDays` before it. */
  loadedAt: number;
  /** How long loading them took, merges included (s). */
  loadSeconds?: number;
}

const DAY_S = 86_400;
const MAX_AGE_MS = DAY_S * 1000;
const INSERT_BATCH = 1_000_000;

/** The event properties `realisticEvent(number)` has, built by ClickHouse (checked against it before loading). */
export const PROPERTIES_SQL = `concat(
  '{"$current_url":"https://example.com', arrayElement(['/', '/pricing', '/docs/start', '/blog/launch', '/signup'], (number % 5) + 1), '?ref=', toString(number % 7),
  '","$pathname":"', arrayElement(['/', '/pricing', '/docs/start', '/blog/launch', '/signup'], (number % 5) + 1),
  '","$host":"example.com","$browser":"', arrayElement(['Chrome', 'Firefox', 'Safari', 'Edge'], (number % 4) + 1),
  '","$browser_version":', toString(120 + number % 5),
  ',"$os":"', if(number % 2 = 1, 'Mac OS X', 'Windows'),
  '","$device_type":"Desktop","$screen_height":1080,"$screen_width":1920,"$lib":"web","$lib_version":"1.200.0","$referrer":"https://www.google.com/","$referring_domain":"www.google.com","$session_id":"session-', toString(intDiv(number, 20)),
  '"', if(number % 3 = 0, '', ',"utm_source":"newsletter"'),
  ',"button":"cta-', toString(number % 11), '","plan":"', if(number % 4 = 0, 'pro', 'free'), '"}')`;

/**
 * A person's id, the same in every table: the person's number, then the project, in hex. The
 * number leads because 18.16's exact unique count hashes a UUID by its first half alone: a
 * constant first half made `uniqExact(person_id)` quadratic, where ingest's hashed ids are not.
 */
const personUuidSql = (team: number, n: string) =>
  `toUUID(concat(substring(hex(toUInt64(${n}) + 0x100000000), 3), '-0000-4000-8000-', substring(hex(toUInt64(${team}) + 0x1000000000000), 3)))`;
const personPropertiesSql = (n: string) => `concat('{"email":"user-', toString(${n}), '@example.com","plan":"', if(${n} % 4 = 0, 'pro', 'free'), '"}')`;

/** The dataset's project, its data loaded (or reused) and merged, so no merge runs under the timings. */
export async function benchProject(dataset: Dataset, deps: { clickhouse: ClickHouse; config: Config }): Promise<BenchProject> {
  const { clickhouse, config } = deps;
  const { events: total, distinctIds } = dataset;
  const stateFile = `${STATE_DIR}/${dataset.slug}.json`;
  const spanS = dataset.spanDays * DAY_S;
  const ownerEmail = `${dataset.slug}@example.test`;
  const label = dataset.slug.replaceAll('-', ' ');

  const readState = async () => JSON.parse(await readFile(stateFile, 'utf8').catch(() => '{}')) as Record<string, BenchProject>;
  const saveProject = async (project: BenchProject) => writeFile(stateFile, `${JSON.stringify({ ...(await readState()), [total]: project }, null, 2)}\n`);

  /** Runs the CLI as an operator would and returns the JSON it prints last. */
  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await promisify(execFile)('npx', ['tributary', ...args], { env: { ...process.env, LOG_LEVEL: 'warn' } });
    const line = stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
    if (!line) throw new Error(`tributary ${args[0]} printed no JSON: ${stdout}`);
    return JSON.parse(line) as Record<string, unknown>;
  }

  async function createProject(): Promise<Omit<BenchProject, 'loadedAt'>> {
    const project = await cli('projects:create', '--name', `${label} ${total}`, '--owner-email', ownerEmail);
    const key = await cli('keys:create', '--email', ownerEmail, '--scopes', '*', '--projects', String(project.id), '--label', label);
    return { projectId: Number(project.id), personalApiKey: String(key.key) };
  }

  const countOf = async (table: 'events' | 'person' | 'person_distinct_id', team: number) =>
    Number((await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM ${ident(table)} WHERE team_id = ${team}`))[0]!.n);

  async function checkPropertiesShape(): Promise<void> {
    const rows = await clickhouse.query<{ p: string }>(Sql.trusted(`SELECT ${PROPERTIES_SQL} AS p FROM numbers(60)`));
    rows.forEach((row, i) => {
      const expected = JSON.stringify(realisticEvent(i).properties);
      if (row.p !== expected) throw new Error(`the generated properties drifted from realisticEvent(${i}):\n  ${row.p}\n  ${expected}`);
    });
  }

  async function waitForMutations(): Promise<void> {
    for (;;) {
      const [row] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${config.clickhouseDatabase} AND is_done = 0`);
      if (Number(row!.n) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }

  /** Waits (up to 10 minutes) for ClickHouse to finish merging the parts the load made. */
  async function waitForMerges(): Promise<void> {
    const deadline = Date.now() + 600_000;
    while (Date.now() < deadline) {
      const [row] = await clickhouse.query<{ n: string }>(sql`SELECT count() AS n FROM system.merges WHERE database = ${config.clickhouseDatabase} AND table = 'events'`);
      if (Number(row!.n) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    console.log('merges still running after 10 minutes; timing anyway');
  }

  async function load(team: number): Promise<number> {
    await checkPropertiesShape();
    const loadedAt = Date.now();
    const end = Math.floor(loadedAt / 1000);
    const started = Date.now();
    const distinctId = `(${dataset.distinctIdSql})`;
    for (let start = 0; start < total; start += INSERT_BATCH) {
      const rows = Math.min(INSERT_BATCH, total - start);
      await clickhouse.command(
        Sql.trusted(
          `INSERT INTO events (${EVENTS_TABLE_COLUMNS.join(', ')})
           SELECT generateUUIDv4(), ${dataset.eventSql}, ${PROPERTIES_SQL},
                  toDateTime(${end - spanS}) + intDiv(number * ${spanS}, ${total}), number % 1000, ${team},
                  concat('user-', toString(${distinctId})), '', now(),
                  ${personUuidSql(team, distinctId)}, ${personPropertiesSql(distinctId)}, toDateTime(${end - spanS - DAY_S}),
                  '', '', '', '', '', now()
           FROM (SELECT number + ${start} AS number FROM numbers(${rows}))`,
        ),
      );
      process.stdout.write(`\rinserted ${(start + rows).toLocaleString('en')} of ${total.toLocaleString('en')} events`);
    }
    const person = `(${dataset.personSql('number')})`;
    await clickhouse.command(
      Sql.trusted(
        `INSERT INTO person (id, created_at, team_id, properties, is_identified, is_deleted, version)
         SELECT ${personUuidSql(team, 'p')}, toDateTime(${end - spanS - DAY_S}), ${team}, ${personPropertiesSql('p')}, 1, 0, 0
         FROM (SELECT DISTINCT ${person} AS p FROM numbers(${distinctIds}))`,
      ),
    );
    // An id whose person started as another's moved to it, one version up, as ingest writes a merge.
    await clickhouse.command(
      Sql.trusted(
        `INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version)
         SELECT ${team}, concat('user-', toString(number)), ${personUuidSql(team, person)}, 0, if(${person} = number, 0, 1) FROM numbers(${distinctIds})`,
      ),
    );
    console.log(`, and ${distinctIds.toLocaleString('en')} distinct ids, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return loadedAt;
  }

  const state = await readState();
  let project = state[total];
  if (project) {
    const pool = createPool(config, { max: 1 });
    const { rowCount } = await pool.query('SELECT 1 FROM projects WHERE id = $1', [project.projectId]).finally(() => pool.end());
    if (!rowCount) project = undefined;
  }
  if (!project) {
    const created = await createProject();
    console.log(`created project ${created.projectId} with the CLI`);
    project = { ...created, loadedAt: 0 };
    // Kept before loading, so a run stopped mid-load leaves no project behind: the next one clears and fills it.
    await saveProject(project);
  }
  const team = project.projectId;
  const events = await countOf('events', team);
  const fresh = Date.now() - project.loadedAt < MAX_AGE_MS;
  if (events === total && (await countOf('person_distinct_id', team)) === distinctIds && fresh && !dataset.reload) {
    console.log(`reusing project ${team}: ${events.toLocaleString('en')} events loaded ${((Date.now() - project.loadedAt) / 3_600_000).toFixed(1)} h ago`);
  } else {
    if (events > 0 || (await countOf('person', team)) > 0) {
      console.log(`removing project ${team}'s ${events.toLocaleString('en')} old events (${dataset.reload ? 'a reload was asked for' : fresh ? 'incomplete' : 'older than a day'}) and persons`);
      for (const table of ['events', 'person', 'person_distinct_id']) {
        await clickhouse.command(Sql.trusted(`ALTER TABLE ${table} DELETE WHERE team_id = ${team}`));
      }
      await waitForMutations();
    }
    const started = Date.now();
    project.loadedAt = await load(team);
    await waitForMerges();
    project.loadSeconds = (Date.now() - started) / 1000;
    await saveProject(project);
    return project;
  }
  await waitForMerges();
  return project;
}

/**
 * Runs the worker's daily override squash now, moves of any age included, as it runs once the
 * load's moves have settled: the moved ids' events then carry their current person. Returns how
 * long it took (s) and how many ids it rewrote.
 */
export async function squashOverrides(deps: { clickhouse: ClickHouse; config: Config }): Promise<{ seconds: number; distinctIds: number }> {
  const pool = createPool(deps.config, { max: 1 });
  const started = Date.now();
  try {
    // A load's last rows may be stored this very second (`_timestamp` keeps whole seconds): the job's clock runs a second ahead to take them.
    const clock = () => new Date(Date.now() + 1_000);
    const result = await runOverrideSquash({ pool, clickhouse: deps.clickhouse, topology: topologyOf(deps.config), logger: createLogger('bench', 'warn'), settleMs: 0, clock });
    return { seconds: (Date.now() - started) / 1000, distinctIds: result.distinctIds };
  } finally {
    await pool.end();
  }
}
