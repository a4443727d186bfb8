import { randomInt, randomUUID } from 'node:crypto';
import { Sql, createClickHouse, serverOf, type ClickHouse, type ClickHouseServer, type MaterializedColumns } from '@tributary/clickhouse';
import { EVENT_ROW_COLUMNS, eventRow, testConfig, type EventRow } from '@tributary/test-support';
import { loadHogQLParser, parseSelect, printQuery, type PersonsOnEventsMode, type PrintOptions } from '../src/index.js';

/**
 * Two projects' rows written straight into the stored ClickHouse tables, for the HogQL layer's
 * integration tests. `TEAM` is the project queries run for; `OTHER_TEAM` shares some keys with it
 * (distinct id `alice`, group `acme`, even a person id) at higher versions, so a missing guard in
 * a join or a versioned subquery changes answers, and carries marker values everywhere else
 * (`other-team-secret`, the year 2031, amount 999999, its own uuids) so a leaked row shows.
 */
export const TEAM = 900_000_000 + randomInt(90_000_000);
export const OTHER_TEAM = TEAM + 1 + randomInt(1_000_000);

export const MARKER = 'other-team-secret';

/** Person ids of the project: alice (two distinct ids, a later version of her properties), bob, carol (deleted), and the stored person of a personless event. */
export const PERSON = { alice: randomUUID(), bob: randomUUID(), carol: randomUUID(), anon: randomUUID() };
const OTHER_PERSON = randomUUID();
const otherEventIds = [randomUUID(), randomUUID(), randomUUID()] as const;

/** Values only the other project's rows hold: none may appear in an answer for `TEAM`. */
export const OTHER_TEAM_VALUES: readonly string[] = [MARKER, '2031-', '999999', OTHER_PERSON, ...otherEventIds];

const CREATED = '2024-01-01 00:00:00';
const OTHER_CREATED = '2031-05-05 00:00:00';

const event = (team: number, distinctId: string, name: string, timestamp: string, properties: object, personId: string, group0 = '', uuid = randomUUID()): EventRow =>
  eventRow(team, distinctId, name, timestamp, properties, { uuid, person_id: personId, person_created_at: team === TEAM ? CREATED : OTHER_CREATED, group_0: group0 });

/**
 * The project's eight events, in time order:
 *
 * | distinct_id | event     | timestamp           | $browser | amount | paid  | group_0 |
 * |-------------|-----------|---------------------|----------|--------|-------|---------|
 * | alice       | $pageview | 2024-01-01 10:00:00 | Chrome   | 5      | true  | acme    |
 * | alice       | $pageview | 2024-01-01 11:00:00 | Chrome   | 15     | false | acme    |
 * | bob         | $pageview | 2024-01-01 12:00:00 | Firefox  | "7"    |       | globex  |
 * | alice-phone | $pageview | 2024-01-02 09:00:00 | Safari   | 20     |       | acme    |
 * | alice       | signup    | 2024-01-02 10:00:00 |          | 100    | true  | acme    |
 * | carol       | $pageview | 2024-01-02 15:00:00 | Chrome   |        |       |         |
 * | bob-laptop  | purchase  | 2024-01-03 08:00:00 | Firefox  | 50     | true  | globex  |
 * | anon        | $pageview | 2024-01-03 12:00:00 | Edge     |        |       |         |
 *
 * Identities: alice and alice-phone are alice's person (alice-phone moved from bob, and the
 * override squash rewrote its event); bob-laptop was bob's and a later version
 * maps it to alice's (its events still carry bob); carol's person is deleted; anon has no mapping
 * (its stored person stays).
 */
const events: EventRow[] = [
  event(TEAM, 'alice', '$pageview', '2024-01-01 10:00:00', { $browser: 'Chrome', $current_url: 'https://example.com/home', amount: 5, paid: true, a: { b: 'deep' }, tags: ['x', 'y'], $session_id: 's1' }, PERSON.alice, 'acme'),
  event(TEAM, 'alice', '$pageview', '2024-01-01 11:00:00', { $browser: 'Chrome', $current_url: 'https://example.com/pricing', amount: 15, paid: false, $session_id: 's1' }, PERSON.alice, 'acme'),
  event(TEAM, 'bob', '$pageview', '2024-01-01 12:00:00', { $browser: 'Firefox', $current_url: 'https://shop.example.org/cart?item=42', amount: '7' }, PERSON.bob, 'globex'),
  event(TEAM, 'alice-phone', '$pageview', '2024-01-02 09:00:00', { $browser: 'Safari', $current_url: 'https://example.com/home', amount: 20 }, PERSON.alice, 'acme'),
  event(TEAM, 'alice', 'signup', '2024-01-02 10:00:00', { plan: 'pro', amount: 100, paid: true }, PERSON.alice, 'acme'),
  event(TEAM, 'carol', '$pageview', '2024-01-02 15:00:00', { $browser: 'Chrome' }, PERSON.carol),
  event(TEAM, 'bob-laptop', 'purchase', '2024-01-03 08:00:00', { $browser: 'Firefox', amount: 50, paid: true }, PERSON.bob, 'globex'),
  event(TEAM, 'anon', '$pageview', '2024-01-03 12:00:00', { $browser: 'Edge' }, PERSON.anon),
  // The other project: the same event names and a shared distinct id, with its markers.
  event(OTHER_TEAM, MARKER, '$pageview', '2031-05-05 10:00:00', { $browser: `${MARKER}-browser`, amount: 999999, paid: true, a: { b: MARKER }, $session_id: 's1' }, OTHER_PERSON, 'acme', otherEventIds[0]),
  event(OTHER_TEAM, 'alice', 'signup', '2031-05-05 11:00:00', { $browser: 'Chrome', plan: MARKER, amount: 999999, paid: true, $session_id: 's1', $current_url: `https://${MARKER}.example.com/s1`, utm_source: MARKER }, OTHER_PERSON, `${MARKER}-group`, otherEventIds[1]),
  event(OTHER_TEAM, 'bob', `${MARKER}-event`, '2031-05-05 12:00:00', { $browser: `${MARKER}-browser`, $current_url: `https://${MARKER}.example.com/`, $session_id: `${MARKER}-session` }, OTHER_PERSON, '', otherEventIds[2]),
];

const person = (team: number, id: string, properties: object, version: number, isDeleted = 0, isIdentified = 1) => ({
  id,
  created_at: team === TEAM ? CREATED : OTHER_CREATED,
  team_id: team,
  properties: JSON.stringify(properties),
  is_identified: isIdentified,
  is_deleted: isDeleted,
  version,
});

const persons = [
  person(TEAM, PERSON.alice, { email: 'alice@old.example.com', plan: 'free' }, 1),
  person(TEAM, PERSON.alice, { email: 'alice@example.com', plan: 'pro', age: 30 }, 2),
  person(TEAM, PERSON.bob, { email: 'bob@example.com', plan: 'free', age: 25 }, 1, 0, 0),
  person(TEAM, PERSON.carol, { email: 'carol@example.com' }, 1),
  person(TEAM, PERSON.carol, { email: 'carol@example.com' }, 2, 1),
  // The other project: its own person, and a row under alice's id at a higher version.
  person(OTHER_TEAM, OTHER_PERSON, { email: `${MARKER}@example.com`, plan: MARKER }, 1),
  person(OTHER_TEAM, PERSON.alice, { email: `${MARKER}@alice.example.com`, plan: MARKER }, 99),
];

const pdi = (team: number, distinctId: string, personId: string, version: number, isDeleted = 0) => ({ team_id: team, distinct_id: distinctId, person_id: personId, is_deleted: isDeleted, version });

// As ingest writes them: an id starts at version 0 on the person its events carry, and a move raises it.
const distinctIds = [
  pdi(TEAM, 'alice', PERSON.alice, 0),
  pdi(TEAM, 'alice-phone', PERSON.bob, 0),
  pdi(TEAM, 'alice-phone', PERSON.alice, 1),
  pdi(TEAM, 'bob', PERSON.bob, 0),
  pdi(TEAM, 'bob-laptop', PERSON.bob, 0),
  pdi(TEAM, 'bob-laptop', PERSON.alice, 1),
  pdi(TEAM, 'carol', PERSON.carol, 0),
  // The other project maps the project's distinct ids to its own person, at higher versions.
  pdi(OTHER_TEAM, MARKER, OTHER_PERSON, 1),
  pdi(OTHER_TEAM, 'alice', OTHER_PERSON, 99),
  pdi(OTHER_TEAM, 'bob', OTHER_PERSON, 99),
];

// alice-phone's move was squashed (its events were rewritten to alice); the other project's row
// would hide bob-laptop's move, were it read.
const squashed = [
  { team_id: TEAM, distinct_id: 'alice-phone', version: 1 },
  { team_id: OTHER_TEAM, distinct_id: 'bob-laptop', version: 99 },
];

// This project's squash cut is before every row it has; the other project's, far ahead, would
// hide every move of this one, were it read.
const squashCuts = [
  { team_id: TEAM, settled_before: '2020-01-01 00:00:00' },
  { team_id: OTHER_TEAM, settled_before: '2100-01-01 00:00:00' },
];

const group = (team: number, index: number, key: string, properties: object, version: number) => ({
  group_type_index: index,
  group_key: key,
  created_at: team === TEAM ? CREATED : OTHER_CREATED,
  team_id: team,
  group_properties: JSON.stringify(properties),
  version,
});

const groups = [
  group(TEAM, 0, 'acme', { name: 'Acme', industry: 'tech' }, 1),
  group(TEAM, 0, 'acme', { name: 'Acme Inc', industry: 'tech' }, 2),
  group(TEAM, 0, 'globex', { name: 'Globex', industry: 'energy' }, 1),
  group(TEAM, 1, 'proj-1', { name: 'Project One' }, 1),
  group(OTHER_TEAM, 0, 'acme', { name: `${MARKER}-acme`, industry: MARKER }, 99),
  group(OTHER_TEAM, 0, `${MARKER}-group`, { name: MARKER }, 1),
];

/** Writes both projects' rows; the team ids are new per run, so nothing else reads them. */
export async function insertTwoTeamFixture(clickhouse: ClickHouse): Promise<void> {
  const columns = <Row extends object>(rows: Row[]) => Object.keys(rows[0]!) as (keyof Row & string)[];
  await clickhouse.insert('events', EVENT_ROW_COLUMNS, events);
  await clickhouse.insert('person', columns(persons), persons);
  await clickhouse.insert('person_distinct_id', columns(distinctIds), distinctIds);
  await clickhouse.insert('squashed_distinct_ids', columns(squashed), squashed);
  await clickhouse.insert('override_squashes', columns(squashCuts), squashCuts);
  await clickhouse.insert('groups', columns(groups), groups);
}

export interface HogQLRunner {
  /** The server the runner prints for. */
  readonly server: ClickHouseServer;
  /** Prints `text` for `TEAM` and runs it: the answer's rows, 64-bit integers as numbers. */
  run(text: string, values?: PrintOptions['values']): Promise<{ sql: string; columns: string[]; rows: unknown[][] }>;
}

/** Runs HogQL on `clickhouse`, printed for `server` (and the materialized columns and persons-on-events mode given) as the query endpoint prints for the server it talks to. */
export function createHogQLRunner(clickhouse: ClickHouse, server: ClickHouseServer, teamId = TEAM, materialized?: MaterializedColumns, personsOnEvents?: PersonsOnEventsMode): HogQLRunner {
  return {
    server,
    async run(text, values) {
      const printed = printQuery(await parseSelect(text), { teamId, server, ...(values && { values }), ...(materialized && { materialized }), ...(personsOnEvents && { personsOnEvents }) });
      const { data } = await clickhouse.queryCompact(Sql.trusted(printed.clickhouse), { settings: { output_format_json_quote_64bit_integers: 0 } });
      return { sql: printed.clickhouse, columns: printed.columns, rows: data };
    },
  };
}

/** The ClickHouse engines the HogQL suites run on: the stack's server (18.16), or chdb's in-process current release. */
export type Engine = 'server' | 'chdb';

/**
 * The setup the HogQL suites share: the parser, both projects' rows on `engine`, and a runner
 * for `TEAM` printing for that engine's version, closed after the file.
 */
export function useTwoTeamFixture(engine: Engine = 'server'): { readonly runner: HogQLRunner; readonly clickhouse: ClickHouse } {
  const context = {} as { runner: HogQLRunner; clickhouse: ClickHouse };
  beforeAll(async () => {
    await loadHogQLParser();
    // chdb loads its engine (a native library) when imported: only the files that use it pay for that.
    context.clickhouse = engine === 'chdb' ? await (await import('@tributary/test-support/chdb')).createChdbClickHouse() : createClickHouse(testConfig());
    await insertTwoTeamFixture(context.clickhouse);
    context.runner = createHogQLRunner(context.clickhouse, await serverOf(context.clickhouse));
  });
  afterAll(() => context.clickhouse.close());
  return context;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const PROJECT_UUIDS = new Set([...events.filter((e) => e.team_id === TEAM).map((e) => e.uuid), ...Object.values(PERSON), '00000000-0000-0000-0000-000000000000']);
// The zero DateTime is what an unmatched row of a LEFT JOIN holds (18.16 prints it as 0000-00-00).
const PROJECT_DAYS = new Set(['2024-01-01', '2024-01-02', '2024-01-03', '0000-00-00', '1970-01-01']);

/**
 * Values in an answer that no row of the project holds: the other project's markers, and any
 * uuid or day not the project's (the shared database holds other tests' projects too, whose
 * rows a leak would return first). An answer for `TEAM` must hold none.
 */
export function foreignValuesIn(rows: unknown): string[] {
  const text = JSON.stringify(rows);
  const uuids = text.match(UUID) ?? [];
  const days = text.match(/\d{4}-\d{2}-\d{2}/g) ?? [];
  // The project's own uuids are random, so one may hold a marker ('2031-', '999999'): they are
  // blanked before the markers are looked for.
  const withoutProjectUuids = text.replace(UUID, (u) => (PROJECT_UUIDS.has(u) ? '' : u));
  return [...OTHER_TEAM_VALUES.filter((value) => withoutProjectUuids.includes(value)), ...uuids.filter((u) => !PROJECT_UUIDS.has(u)), ...days.filter((d) => !PROJECT_DAYS.has(d))];
}

/** Reads of a stored table, in printed SQL, without the project's guard on their alias: there must be none. */
export function unguardedReads(sql: string, teamId = TEAM): string[] {
  // String literals and names with spaces are not SQL: blanked, so only real reads are found.
  const code = sql.replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/`(?:[^`\\]|\\.)*\s(?:[^`\\]|\\.)*`/g, '``');
  const reads = [...code.matchAll(/\b(?:FROM|JOIN)\s+(?:\w+\.)?(events|person|person_distinct_id|squashed_distinct_ids|override_squashes|groups)\b(?:\s+AS\s+(`(?:[^`\\]|\\.)*`|\w+))?/g)];
  const guarded = (alias: string | undefined) => alias !== undefined && code.includes(`${alias.startsWith('`') ? alias : `\`${alias}\``}.team_id = ${teamId}`);
  return reads.filter(([, , alias]) => !guarded(alias)).map(([read]) => read);
}

/** Functions whose arguments ClickHouse may read as a table name: the printer never prints them. */
const TABLE_TAKING_FUNCTIONS = /\b(?:in|notIn|globalIn|globalNotIn|nullIn|notNullIn|globalNullIn|globalNotNullIn|joinGet\w*|dictGet\w*|dictHas|hasColumnInTable)\(/i;

/** The bracketed group that starts at `open` (a `(`), brackets inside it balanced. */
function bracketed(code: string, open: number): string {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '(') depth++;
    else if (code[i] === ')' && --depth === 0) return code.slice(open, i + 1);
  }
  return code.slice(open);
}

/**
 * Places in printed SQL where ClickHouse could read a name as a table outside the FROM and JOIN
 * clauses (which `unguardedReads` checks): the right side of IN that is not a subquery or a list
 * of constants, and functions that take a table. There must be none: such a name reads every
 * project's rows of that table, unguarded.
 */
export function tableNamesOutsideFrom(sql: string): string[] {
  // Strings are blanked and quoted names made one neutral name, so only SQL's own words are read.
  const code = sql.replace(/'(?:[^'\\]|\\.)*'/g, "''").replace(/`(?:[^`\\]|\\.)*`/g, '`x`');
  const found: string[] = [];
  const fn = code.match(TABLE_TAKING_FUNCTIONS);
  if (fn) found.push(fn[0]);
  for (const match of code.matchAll(/\bIN\b\s*/gi)) {
    const at = match.index! + match[0].length;
    if (code[at] !== '(') {
      found.push(code.slice(match.index!, at + 40));
      continue;
    }
    const group = bracketed(code, at);
    if (/^\(\s*SELECT\b/i.test(group)) continue;
    // A list of constants: no quoted name, and every bare word a function's name or NULL.
    const names = group.match(/`|\b[A-Za-z_]\w*\b(?!\s*\()/g)?.filter((w) => !/^(?:NULL|true|false)$/i.test(w)) ?? [];
    if (names.length) found.push(`${match[0]}${group.slice(0, 80)}`);
  }
  return found;
}
