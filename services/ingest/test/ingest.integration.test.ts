import { ident, sql, type ClickHouse } from '@tributary/clickhouse';
import { PersonCache } from '@tributary/control-plane';
import { personlessPersonId } from '@tributary/ingestion';
import { decodeCaptureMessage, encodeCaptureEvents } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { uniqueName, waitFor } from '@tributary/test-support';
import { RowBuffer } from '../src/clickhouse-rows.js';
import { RowWriter } from '../src/clickhouse-writer.js';
import { PersonOutbox } from '../src/persons/person-outbox.js';
import { startIngestHarness, type IngestHarness } from './ingest-harness.js';

let h: IngestHarness;
let run = 0;
/** A distinct id unique to one test, so tests sharing the project do not see each other's persons. */
const id = (name: string) => `${name}-${++run}-${Date.now()}`;

beforeAll(async () => {
  h = await startIngestHarness();
  await h.startConsumer();
}, 60_000);

afterAll(async () => {
  await h.close();
});

async function personOf(distinctId: string) {
  return waitFor(async () => {
    const { rows } = await h.pool.query<{ id: number; uuid: string; properties: Record<string, unknown>; is_identified: boolean; version: number }>(
      `SELECT p.id, p.uuid, p.properties, p.is_identified, p.version FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
        WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [h.tenant.project.id, distinctId],
    );
    return rows[0];
  }, { what: `person of ${distinctId}` });
}

async function eventByUuid(uuid: string) {
  return waitFor(async () => (await h.events()).find((e) => e.uuid === uuid), { what: `event ${uuid}`, timeoutMs: 60_000 });
}

async function warnings(type: string) {
  return h.clickhouse.query<{ details: string }>(sql`SELECT details FROM ingestion_warnings WHERE team_id = ${h.tenant.project.id} AND type = ${type}`);
}

describe('persons', () => {
  it('creates a person with $set_once then $set, top-level $set winning, and records it on the event', async () => {
    const user = id('user');
    const [uuid] = await h.send([{ event: 'signed up', distinct_id: user, properties: { $set: { plan: 'free', name: 'A' }, $set_once: { first: 1 }, $browser: 'Chrome' }, $set: { plan: 'pro' } }]);
    const event = await eventByUuid(uuid!);
    const person = await personOf(user);
    expect(person.properties).toEqual({ plan: 'pro', name: 'A', first: 1, $browser: 'Chrome', $initial_browser: 'Chrome' });
    expect(person.is_identified).toBe(false);
    expect(event.person_id).toBe(person.uuid);
    expect(JSON.parse(event.person_properties)).toEqual(person.properties);
    expect(JSON.parse(event.properties).$set).toEqual({ plan: 'pro', name: 'A' });
  });

  it('records an existing person on an event without person updates, leaving the person untouched', async () => {
    const user = id('user');
    await h.send([{ event: 'signed up', distinct_id: user, properties: { $set: { plan: 'pro' } } }]);
    const before = await personOf(user);
    const [plain] = await h.send([{ event: 'server side', distinct_id: user, properties: { amount: 3 } }]);
    const event = await eventByUuid(plain!);
    expect(event.person_id).toBe(before.uuid);
    expect(JSON.parse(event.person_properties)).toEqual({ plan: 'pro' });
    expect((await personOf(user)).version).toBe(before.version);
  });

  it('applies $set_once only to missing keys, $set over existing ones, and $unset', async () => {
    const user = id('user');
    await h.send([{ event: 'a', distinct_id: user, properties: { $set: { a: 1, b: 1, c: 1 } } }]);
    await personOf(user);
    const [last] = await h.send([{ event: 'b', distinct_id: user, properties: { $set_once: { a: 2, d: 4 }, $set: { b: 2 }, $unset: ['c'] } }]);
    await eventByUuid(last!);
    expect((await personOf(user)).properties).toEqual({ a: 1, b: 2, d: 4 });
  });

  it('$identify with $anon_distinct_id merges the anonymous person into the identified one', async () => {
    const anon = id('anon');
    const user = id('user');
    await h.send([{ event: '$pageview', distinct_id: anon, properties: { $set: { seen: 'anon', shared: 'anon' } } }]);
    await h.send([{ event: 'x', distinct_id: user, properties: { $set: { shared: 'user' } } }]);
    const anonPerson = await personOf(anon);
    const userPerson = await personOf(user);
    expect(anonPerson.id).not.toBe(userPerson.id);
    const [identify] = await h.send([{ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon, $set: { email: 'u@example.com' } } }]);
    await eventByUuid(identify!);
    const merged = await personOf(anon);
    expect(merged.id).toBe(userPerson.id);
    expect(merged.properties).toEqual({ seen: 'anon', shared: 'user', email: 'u@example.com' });
    expect(merged.is_identified).toBe(true);
    const gone = await h.pool.query('SELECT 1 FROM persons WHERE id = $1', [anonPerson.id]);
    expect(gone.rowCount).toBe(0);
  });

  it('refuses to merge a person that is already identified, with a warning', async () => {
    const a = id('a');
    const b = id('b');
    await h.send([{ event: '$identify', distinct_id: a, properties: {} }]);
    await h.send([{ event: '$identify', distinct_id: b, properties: {} }]);
    const personA = await personOf(a);
    const personB = await personOf(b);
    const [merge] = await h.send([{ event: '$identify', distinct_id: a, properties: { $anon_distinct_id: b } }]);
    await eventByUuid(merge!);
    expect((await personOf(b)).id).toBe(personB.id);
    expect((await personOf(a)).id).toBe(personA.id);
    const refused = await warnings('cannot_merge_already_identified');
    expect(refused.some((w) => w.details.includes(b))).toBe(true);
  });

  it('$create_alias attaches an unknown distinct id to the alias’s person', async () => {
    const main = id('main');
    const other = id('other');
    await h.send([{ event: 'x', distinct_id: main, properties: {} }]);
    const mainPerson = await personOf(main);
    const [alias] = await h.send([{ event: '$create_alias', distinct_id: other, properties: { alias: main } }]);
    await eventByUuid(alias!);
    expect((await personOf(other)).id).toBe(mainPerson.id);
  });

  it('never merges on an illegal distinct id, and warns', async () => {
    const user = id('user');
    const [event] = await h.send([{ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: 'undefined' } }]);
    await eventByUuid(event!);
    const found = await h.pool.query('SELECT 1 FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = $2', [h.tenant.project.id, 'undefined']);
    expect(found.rowCount).toBe(0);
    expect((await warnings('cannot_merge_with_illegal_distinct_id')).some((w) => w.details.includes(user))).toBe(true);
  });

  it('personless events get the derived person id, no person, no person properties; their $identify is dropped', async () => {
    const anon = id('anon');
    const [pageview, identify] = await h.send([
      { event: '$pageview', distinct_id: anon, properties: { $process_person_profile: false, $set: { a: 1 } } },
      { event: '$identify', distinct_id: anon, properties: { $process_person_profile: false, $anon_distinct_id: 'x' } },
    ]);
    const event = await eventByUuid(pageview!);
    expect(event.person_id).toBe(personlessPersonId(h.tenant.project.id, anon));
    expect(JSON.parse(event.person_properties)).toEqual({});
    expect(JSON.parse(event.properties).$set).toBeUndefined();
    const persons = await h.pool.query('SELECT 1 FROM person_distinct_ids WHERE team_id = $1 AND distinct_id = $2', [h.tenant.project.id, anon]);
    expect(persons.rowCount).toBe(0);
    expect((await h.events()).some((e) => e.uuid === identify)).toBe(false);
  });

  it('a distinct id that sent personless events starts one version up when it joins a person, so person-on-events queries override its events', async () => {
    const anon = id('anon');
    const user = id('user');
    const [personless] = await h.send([{ event: '$pageview', distinct_id: anon, properties: { $process_person_profile: false } }]);
    expect((await eventByUuid(personless!)).person_id).toBe(personlessPersonId(h.tenant.project.id, anon));
    await h.send([{ event: 'signed up', distinct_id: user, properties: { $set: { plan: 'pro' } } }]);
    const person = await personOf(user);
    await h.send([{ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } }]);
    expect((await personOf(anon)).uuid).toBe(person.uuid);

    const versions = async () =>
      new Map(
        (
          await h.clickhouse.query<{ distinct_id: string; version: string }>(
            sql`SELECT distinct_id, toString(max(version)) AS version FROM person_distinct_id WHERE team_id = ${h.tenant.project.id} AND distinct_id IN (${anon}, ${user}) GROUP BY distinct_id`,
          )
        ).map((r) => [r.distinct_id, Number(r.version)]),
      );
    const stored = await waitFor(async () => ((await versions()).size === 2 ? versions() : undefined), { what: 'both ids in ClickHouse' });
    // The personless event carries another person than its id's: only a version above 0 makes the id an override.
    expect(stored.get(anon)).toBe(1);
    // An id whose events all carry its own person needs none.
    expect(stored.get(user)).toBe(0);
  });
});

describe('GeoIP', () => {
  it('adds the capturing address’s $geoip_* to the event, and to its person as $set and $initial_geoip_* as $set_once', async () => {
    const user = id('geo');
    const [first] = await h.send([{ event: '$pageview', distinct_id: user, properties: {} }], { ip: '81.2.69.142' });
    const event = await eventByUuid(first!);
    expect(JSON.parse(event.properties)).toMatchObject({ $geoip_country_code: 'GB', $geoip_country_name: 'United Kingdom', $geoip_continent_code: 'EU' });
    expect((await personOf(user)).properties).toMatchObject({ $geoip_country_code: 'GB', $initial_geoip_country_code: 'GB' });

    const [moved] = await h.send([{ event: '$pageview', distinct_id: user, properties: { $set: { $geoip_city_name: 'Client says' } } }], { ip: '8.8.8.8' });
    await eventByUuid(moved!);
    const person = (await personOf(user)).properties;
    expect(person).toMatchObject({ $geoip_country_code: 'US', $initial_geoip_country_code: 'GB', $geoip_city_name: 'Client says' });
  });

  it('leaves events with $geoip_disable, and events from private addresses, without location', async () => {
    const user = id('nogeo');
    const [disabled] = await h.send([{ event: '$pageview', distinct_id: user, properties: { $geoip_disable: true } }], { ip: '81.2.69.142' });
    const [local] = await h.send([{ event: '$pageview', distinct_id: user, properties: {} }], { ip: '10.1.2.3' });
    for (const uuid of [disabled!, local!]) expect(Object.keys(JSON.parse((await eventByUuid(uuid)).properties)).filter((k) => k.includes('geoip_') && k !== '$geoip_disable')).toEqual([]);
    expect(Object.keys((await personOf(user)).properties).filter((k) => k.includes('geoip'))).toEqual([]);
  });
});

describe('groups, timestamps and warnings', () => {
  it('$groupidentify creates the group and $groups fills the $group_N column', async () => {
    const user = id('user');
    await h.send([{ event: '$groupidentify', distinct_id: user, properties: { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } } }]);
    const [event] = await h.send([{ event: 'used', distinct_id: user, properties: { $groups: { company: 'acme' } } }]);
    const row = await eventByUuid(event!);
    expect(row.group_0).toBe('acme');
    const { rows } = await h.pool.query<{ properties: Record<string, unknown> }>('SELECT properties FROM groups WHERE team_id = $1 AND group_key = $2', [h.tenant.project.id, 'acme']);
    expect(rows[0]!.properties).toEqual({ name: 'Acme' });
  });

  it('$groups of a type no $groupidentify registered registers it, up to five per project; past five the link is dropped with a warning', async () => {
    const user = id('grouped');
    const registered = async () =>
      (await h.pool.query<{ group_type: string; group_type_index: number }>('SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1', [h.tenant.project.id])).rows;
    // Other tests of the project may have registered types: fill the remaining slots, then one more.
    const room = 5 - (await registered()).length;
    const types = Array.from({ length: room + 1 }, (_, i) => `${user}-type-${i}`);
    const [event] = await h.send([{ event: 'used', distinct_id: user, properties: { $groups: Object.fromEntries(types.map((type, i) => [type, `key-${i}`])) } }]);
    await eventByUuid(event!);
    const indexes = new Map((await registered()).map((r) => [r.group_type, r.group_type_index]));
    expect(indexes.size).toBe(5);
    const sixth = types.pop()!;
    expect(indexes.has(sixth)).toBe(false);
    const [columns] = await h.clickhouse.query<Record<string, string>>(
      sql`SELECT group_0, group_1, group_2, group_3, group_4 FROM events WHERE team_id = ${h.tenant.project.id} AND toString(uuid) = ${event!} LIMIT 1`,
    );
    types.forEach((type, i) => expect(columns![`group_${indexes.get(type)}`]).toBe(`key-${i}`));
    expect(Object.values(columns!)).not.toContain(`key-${room}`);
    // Registering a type is not creating a group: `$groups` alone never does.
    const { rows: groups } = await h.pool.query('SELECT 1 FROM groups WHERE team_id = $1 AND group_key LIKE $2', [h.tenant.project.id, 'key-%']);
    expect(groups).toEqual([]);
    const limit = await waitFor(async () => (await warnings('group_type_limit_reached')).find((w) => w.details.includes(event!)), { what: 'group type limit warning' });
    expect(JSON.parse(limit.details)).toMatchObject({ groupType: sixth, eventUuid: event });
  });

  it('corrects clock skew with sent_at and records an invalid timestamp as a warning', async () => {
    const user = id('user');
    const [skewed] = await h.send([{ event: 'skewed', distinct_id: user, timestamp: '2026-01-01T09:59:00.000Z' }], { now: '2026-01-01T12:00:00.000Z', sentAt: '2026-01-01T10:00:00.000Z' });
    const [invalid] = await h.send([{ event: 'invalid', distinct_id: user, timestamp: 'not a time' }], { now: '2026-01-02T00:00:00.000Z' });
    expect((await eventByUuid(skewed!)).timestamp).toBe('2026-01-01 11:59:00');
    expect((await eventByUuid(invalid!)).timestamp).toBe('2026-01-02 00:00:00');
    expect((await warnings('ignored_invalid_timestamp')).some((w) => w.details.includes(invalid!))).toBe(true);
  });

  it('stores an event timed before 1970 (which ClickHouse cannot hold) at now, and the events after it', async () => {
    const user = id('epoch');
    const [early, after] = await h.send(
      [
        { event: 'before epoch', distinct_id: user, timestamp: new Date(-8.64e15).toISOString() },
        { event: 'after it', distinct_id: user, timestamp: '2026-01-02T00:00:01.000Z' },
      ],
      { now: '2026-01-02T00:00:00.000Z' },
    );
    expect((await eventByUuid(early!)).timestamp).toBe('2026-01-02 00:00:00');
    expect((await eventByUuid(after!)).timestamp).toBe('2026-01-02 00:00:01');
    expect((await warnings('ignored_invalid_timestamp')).some((w) => w.details.includes(early!) && w.details.includes('before 1970'))).toBe(true);
  });

  it('stores survey and flag events, warning about a survey event without $survey_id', async () => {
    const user = id('user');
    const [survey, flag] = await h.send([
      { event: 'survey sent', distinct_id: user, properties: { $survey_response: 'yes' } },
      { event: '$feature_flag_called', distinct_id: user, properties: { $feature_flag: 'beta', $feature_flag_response: 'test', '$feature/beta': 'test' } },
    ]);
    await eventByUuid(survey!);
    expect(JSON.parse((await eventByUuid(flag!)).properties)['$feature/beta']).toBe('test');
    expect((await warnings('missing_survey_property')).some((w) => w.details.includes('$survey_id') && w.details.includes(survey!))).toBe(true);
  });

  it('records on each event of a batch its person as it was after that event, and keeps the final state', async () => {
    const user = id('batch');
    const other = id('batch');
    const uuids = await h.send([
      { event: 'one', distinct_id: user, properties: { $set: { step: 1 }, $set_once: { first: 'one' } } },
      { event: 'other', distinct_id: other, properties: { $set: { mine: true } } },
      { event: 'two', distinct_id: user, properties: { $set: { step: 2 }, $set_once: { first: 'two' } } },
      { event: 'plain', distinct_id: user },
      { event: 'three', distinct_id: user, properties: { $unset: ['first'] } },
    ]);
    const rows = await Promise.all(uuids.map((uuid) => eventByUuid(uuid)));
    expect(rows.map((r) => JSON.parse(r.person_properties))).toEqual([
      { step: 1, first: 'one' },
      { mine: true },
      { step: 2, first: 'one' },
      { step: 2, first: 'one' },
      { step: 2 },
    ]);
    const person = await personOf(user);
    expect(person.properties).toEqual({ step: 2 });
    expect(new Set([rows[0]!.person_id, rows[2]!.person_id, rows[4]!.person_id])).toEqual(new Set([person.uuid]));
    const copies = await h.clickhouse.query<{ properties: string }>(
      sql`SELECT properties FROM person WHERE team_id = ${h.tenant.project.id} AND toString(id) = ${person.uuid} ORDER BY version DESC LIMIT 1`,
    );
    expect(JSON.parse(copies[0]!.properties)).toEqual({ step: 2 });
  });

  it('applies a historical batch in order', async () => {
    const user = id('hist');
    const events = Array.from({ length: 5 }, (_, i) => ({ event: 'h', distinct_id: user, timestamp: `2020-01-0${i + 1}T00:00:00Z`, properties: { $set: { step: i } } }));
    const uuids = await h.send(events, { historical: true });
    await eventByUuid(uuids[4]!);
    expect((await personOf(user)).properties.step).toBe(4);
  });
});

describe('message formats', () => {
  it('reads one-event messages and capture’s several-event messages alike, one person’s events in order across both', async () => {
    const user = id('formats');
    const step = (i: number) => ({ event: 'step', distinct_id: user, properties: { $set: { step: i } } });
    const uuids = [
      ...(await h.send([0, 1, 2, 3].map(step), { several: true })),
      ...(await h.send([step(4)])),
      ...(await h.send([5, 6, 7].map(step), { several: true })),
      ...(await h.send([8, 9].map(step))),
    ];
    const events = await Promise.all(uuids.map(eventByUuid));
    expect(events.map((e) => JSON.parse(e.person_properties).step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect((await personOf(user)).properties.step).toBe(9);
  });

  it('dead-letters a bad event of a several-event message alone, as a one-event message keyed by its person, and ingests the rest', async () => {
    const user = id('neighbour');
    const events = h.captureMessages([0, 1, 2, 3].map((i) => ({ event: `n${i}`, distinct_id: user })));
    events[1] = { ...events[1]!, data: 'not json at all' };
    const lines = encodeCaptureEvents(events)[0]!.split('\n');
    lines[3] = 'no tab on this line';
    const letters: { key: string | undefined; value: string; reason: string; offset: string }[] = [];
    const reader = h.kafka.consumer({ groupId: uniqueName('dead-letter-reader') });
    await reader.connect();
    await reader.subscribe({ topics: [h.topics.deadLetter], fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) =>
        void letters.push({ key: message.key?.toString(), value: String(message.value), reason: String(message.headers?.reason), offset: String(message.headers?.source_offset) }),
    });
    await h.producer.send({ topic: h.topics.realtime, acks: -1, messages: [{ partition: 0, key: null, value: lines.join('\n') }] });

    const kept = await Promise.all([events[0]!, events[3]!].map((e) => eventByUuid(e.uuid)));
    expect(kept.map((e) => e.event)).toEqual(['n0', 'n3']);
    const mine = await waitFor(async () => {
      const found = letters.filter((l) => l.value.includes(user) || l.value === 'no tab on this line');
      return found.length >= 2 ? found : undefined;
    }, { what: 'two dead letters' });
    await reader.disconnect();
    const [notJson, noTab] = [mine.find((l) => l.value.includes(user))!, mine.find((l) => l.value === 'no tab on this line')!];
    expect(decodeCaptureMessage(notJson.value)).toEqual({ ok: true, message: events[1] });
    expect(notJson).toMatchObject({ key: `${h.tenant.project.api_token}:${user}`, reason: expect.stringMatching(/not JSON/) });
    expect(noTab).toMatchObject({ key: undefined, reason: expect.stringMatching(/no tab/), offset: notJson.offset });
    expect((await h.events()).filter((e) => e.distinct_id === user)).toHaveLength(2);
  });

  it('dead-letters alone an event whose person change the store refuses for the event’s own reason, and the persons of the events beside it are recorded as each left them', async () => {
    const [a, b, poisoned] = [id('beside-a'), id('beside-b'), id('poisoned')];
    // A person change that Postgres refuses every time, as a trigger refuses it, whatever else runs.
    const poison = uniqueName('poison');
    const letters: string[] = [];
    const reader = h.kafka.consumer({ groupId: uniqueName('dead-letter-reader') });
    try {
      await h.pool.query(`CREATE FUNCTION ${poison}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`);
      await h.pool.query(`CREATE TRIGGER ${poison} BEFORE INSERT OR UPDATE ON persons FOR EACH ROW WHEN (NEW.properties ? '${poison}') EXECUTE FUNCTION ${poison}()`);
      await reader.connect();
      await reader.subscribe({ topics: [h.topics.deadLetter], fromBeginning: true });
      await reader.run({ eachMessage: async ({ message }) => void (String(message.value).includes(poisoned) && letters.push(String(message.headers?.reason))) });
      const events = h.captureMessages([
        { event: 'one', distinct_id: a, properties: { $set: { step: 1 }, $browser: 'Chrome' } },
        { event: 'refused', distinct_id: poisoned, properties: { $set: { [poison]: true } } },
        { event: 'two', distinct_id: a, properties: { $set: { step: 2 } } },
        { event: 'three', distinct_id: b, properties: { $set: { step: 3 } } },
      ]);
      // One message, so one chunk: its persons are first applied together, and that attempt fails;
      // the attempts after it take back its encoded person properties and write theirs in their place.
      await h.producer.send({ topic: h.topics.realtime, acks: -1, messages: [{ partition: 0, key: null, value: encodeCaptureEvents(events)[0]! }] });
      const rows = await Promise.all([events[0]!, events[2]!, events[3]!].map((e) => eventByUuid(e.uuid)));
      expect(rows.map((e) => JSON.parse(e.person_properties))).toEqual([
        { step: 1, $browser: 'Chrome', $initial_browser: 'Chrome' },
        { step: 2, $browser: 'Chrome', $initial_browser: 'Chrome' },
        { step: 3 },
      ]);
      await waitFor(async () => letters.length > 0, { what: 'the refused event’s dead letter' });
      expect(letters[0]).toMatch(/person changes failed/);
      expect((await h.events()).filter((e) => e.distinct_id === poisoned)).toHaveLength(0);
    } finally {
      await reader.disconnect();
      await h.pool.query(`DROP TRIGGER IF EXISTS ${poison} ON persons`);
      await h.pool.query(`DROP FUNCTION IF EXISTS ${poison}()`);
    }
  });

  it('sends a row ClickHouse refuses for its content to the dead-letter topic as the line it was sent as, writes the rows beside it, and goes on', async () => {
    const user = id('refused-row');
    // A materialized view that throws for one event name: ClickHouse then refuses every insert
    // that holds such a row, each time, as it refuses a value that does not parse.
    const view = uniqueName('refusing_view');
    const refusedName = uniqueName('refused event');
    const letters: { value: string; headers: Record<string, string> }[] = [];
    const reader = h.kafka.consumer({ groupId: uniqueName('dead-letter-reader') });
    try {
      await h.clickhouse.command(sql`CREATE MATERIALIZED VIEW ${ident(view)} ENGINE = Null AS SELECT throwIf(event = ${refusedName}) AS refused FROM events`);
      await reader.connect();
      await reader.subscribe({ topics: [h.topics.deadLetter], fromBeginning: true });
      await reader.run({
        eachMessage: async ({ message }) => {
          if (!String(message.value).includes(user)) return;
          letters.push({ value: String(message.value), headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])) });
        },
      });
      const events = h.captureMessages([
        { event: 'before', distinct_id: user },
        { event: refusedName, distinct_id: user },
        { event: 'after', distinct_id: user },
      ]);
      // One message, so one chunk, whose rows go in one insert.
      const [sent] = await h.producer.send({ topic: h.topics.realtime, acks: -1, messages: [{ partition: 1, key: null, value: encodeCaptureEvents(events)[0]! }] });
      const kept = await Promise.all([events[0]!, events[2]!].map((e) => eventByUuid(e.uuid)));
      expect(kept.map((e) => e.event)).toEqual(['before', 'after']);
      const [letter] = await waitFor(async () => (letters.length > 0 ? letters : undefined), { what: 'the refused row’s dead letter' });
      expect(letter!.value).toMatch(new RegExp(`^${events[1]!.uuid}\t${refusedName}\t.*\t${user}\t.*\n$`));
      expect(letter!.headers).toMatchObject({
        reason: expect.stringMatching(/^ClickHouse refused the row: Code: 395/),
        clickhouse_table: 'events',
        source_topic: h.topics.realtime,
        source_partition: '1',
        source_offset: sent!.baseOffset,
        source_last_offset: sent!.baseOffset,
      });
      expect(letters).toHaveLength(1);
      // The partition goes on past the refused row.
      const later = await h.send([{ event: 'later', distinct_id: user }]);
      expect((await eventByUuid(later[0]!)).event).toBe('later');
    } finally {
      await reader.disconnect();
      await h.clickhouse.command(sql`DROP TABLE IF EXISTS ${ident(view)}`);
    }
  });
});

describe('delivery', () => {
  it('sends an unparsable message to the dead-letter topic with the reason, and goes on', async () => {
    const reasons: string[] = [];
    const consumer = h.kafka.consumer({ groupId: `${h.topics.deadLetter}-reader` });
    await consumer.connect();
    await consumer.subscribe({ topics: [h.topics.deadLetter], fromBeginning: true });
    // The topic also holds other tests' dead letters: this one is keyed `x`.
    await consumer.run({ eachMessage: async ({ message }) => void (String(message.key) === 'x' && reasons.push(String(message.headers?.reason ?? ''))) });
    await h.producer.send({ topic: h.topics.realtime, acks: -1, messages: [{ key: 'x', value: '{not json' }] });
    const [after] = await h.send([{ event: 'after the bad one', distinct_id: id('user') }]);
    await eventByUuid(after!);
    await waitFor(async () => reasons.length > 0, { what: 'a dead letter' });
    expect(reasons[0]).toMatch(/not JSON/);
    await consumer.disconnect();
  });

  it('finds a message that makes its chunk fail for another reason than a store, dead-letters it with the error, and ingests the chunk’s others', async () => {
    const isolated = await startIngestHarness({ ingestPartitionsConcurrently: 1 });
    const reader = isolated.kafka.consumer({ groupId: uniqueName('poison-reader') });
    const letters: { value: string; reason: string }[] = [];
    try {
      // A bug that only one message's content reaches, as an odd event would in real code.
      await isolated.startConsumer(undefined, (processor) => ({
        async processBatch(messages, rows, deadLetters) {
          if (messages.some((m) => String(m.value).includes('poison-pill'))) throw new TypeError("Cannot read properties of undefined (reading 'pill')");
          await processor.processBatch(messages, rows, deadLetters);
        },
      }));
      await reader.connect();
      await reader.subscribe({ topics: [isolated.topics.deadLetter], fromBeginning: true });
      await reader.run({ eachMessage: async ({ message }) => void letters.push({ value: String(message.value), reason: String(message.headers?.reason ?? '') }) });
      const sent = await isolated.send([
        { event: 'before', distinct_id: 'poison-1' },
        { event: 'poison-pill', distinct_id: 'poison-1' },
        { event: 'after', distinct_id: 'poison-1' },
        { event: 'beside', distinct_id: 'poison-2' },
      ]);
      const stored = await isolated.waitForEvents(3);
      expect(stored.map((e) => e.event).sort()).toEqual(['after', 'before', 'beside']);
      const [letter] = await waitFor(async () => (letters.length > 0 ? letters : undefined), { what: 'the poison message’s dead letter' });
      expect(letter!.value).toContain(sent[1]!);
      expect(letter!.reason).toBe("ingest failed on this message: Cannot read properties of undefined (reading 'pill')");
    } finally {
      await reader.disconnect();
      await isolated.close();
    }
  });

  it('hands each message to the processor once: a committed batch is not fetched again', async () => {
    const seen = new Map<string, number>();
    const isolated = await startIngestHarness();
    try {
      await isolated.startConsumer(undefined, (processor) => ({
        async processBatch(messages, rows, deadLetters) {
          for (const message of messages) {
            const uuid = (JSON.parse(String(message.value)) as { uuid: string }).uuid;
            seen.set(uuid, (seen.get(uuid) ?? 0) + 1);
          }
          await processor.processBatch(messages, rows, deadLetters);
        },
      }));
      const first = await isolated.send(Array.from({ length: 5 }, (_, i) => ({ event: 'first', distinct_id: 'once', properties: { $set: { step: i } } })));
      await isolated.waitForEvents(5);
      const second = await isolated.send([{ event: 'second', distinct_id: 'once', properties: { $set: { step: 5 } } }]);
      await isolated.waitForEvents(6);
      expect([...first, ...second].map((uuid) => seen.get(uuid))).toEqual([1, 1, 1, 1, 1, 1]);
    } finally {
      await isolated.close();
    }
  });

  it.each([1, 2])('works on at most INGEST_PARTITIONS_CONCURRENTLY=%i partitions’ chunks at a time', async (limit) => {
    const isolated = await startIngestHarness({ ingestPartitionsConcurrently: limit });
    let inFlight = 0;
    let most = 0;
    try {
      await isolated.startConsumer(undefined, (processor) => ({
        async processBatch(messages, rows, deadLetters) {
          most = Math.max(most, ++inFlight);
          // Long enough that the other partition's chunk arrives while this one is in processing.
          await new Promise((resolve) => setTimeout(resolve, 300));
          try {
            await processor.processBatch(messages, rows, deadLetters);
          } finally {
            inFlight -= 1;
          }
        },
      }));
      // Distinct ids spread over both partitions, in several rounds so each partition has chunks queued.
      for (let round = 0; round < 3; round++) {
        await isolated.send(Array.from({ length: 20 }, (_, i) => ({ event: 'spread', distinct_id: `spread-${i}` })), { several: true });
      }
      await isolated.waitForEvents(60);
      expect(most).toBe(limit);
    } finally {
      await isolated.close();
    }
  });

  it('lets chunks grow only as far as a partition may queue under INGEST_MAX_QUEUED_EVENTS', async () => {
    /** The largest chunk the consumer hands over with this budget, while a backlog waits in Kafka. */
    const largestChunk = async (budget: number) => {
      const isolated = await startIngestHarness({ ingestMaxQueuedEvents: budget, ingestPartitionsConcurrently: 1 });
      let largest = 0;
      try {
        // In small sends, so a fetch brings a partition a few record batches of about fifty events (1.2 MB in all, 128 KB a fetch), not its whole backlog.
        for (let send = 0; send < 12; send++) {
          await isolated.send(Array.from({ length: 100 }, (_, i) => ({ event: 'backlog', distinct_id: `queue-${i}`, properties: { padding: 'x'.repeat(1_000) } })));
        }
        await isolated.startConsumer(undefined, (processor) => ({
          async processBatch(messages, rows, deadLetters) {
            largest = Math.max(largest, messages.length);
            // Slow enough that the partitions not in processing have time to fetch what their share lets them.
            await new Promise((resolve) => setTimeout(resolve, 200));
            await processor.processBatch(messages, rows, deadLetters);
          },
        }));
        await isolated.waitForEvents(1_200);
        return largest;
      } finally {
        await isolated.close();
      }
    };
    // A share of 20 events pauses a partition once a fetch brought it more (measured: largest chunks of 51-82 events); 40,000 lets each queue its backlog (583-672).
    expect(await largestChunk(40)).toBeLessThanOrEqual(300);
    expect(await largestChunk(40_000)).toBeGreaterThanOrEqual(450);
  });

  it('goes on with every partition when INGEST_MAX_QUEUED_EVENTS is smaller than the partitions it is shared by', async () => {
    const isolated = await startIngestHarness({ ingestMaxQueuedEvents: 1 });
    try {
      await isolated.startConsumer();
      // Several rounds, so that both partitions are busy at once and each is paused and resumed.
      for (let round = 0; round < 5; round++) {
        await isolated.send(Array.from({ length: 20 }, (_, i) => ({ event: 'tiny queue', distinct_id: `tiny-${i}` })));
      }
      expect(await isolated.waitForEvents(100)).toHaveLength(100);
    } finally {
      await isolated.close();
    }
  });

  it('a crash after ClickHouse accepted a batch but before the offset commit never shows an event twice', async () => {
    let failures = 1;
    const flaky: ClickHouse = {
      ...h.clickhouse,
      query: (s) => h.clickhouse.query(s),
      command: (s) => h.clickhouse.command(s),
      insert: (table, columns, rows) => h.clickhouse.insert(table, columns, rows),
      async insertEncoded(table, rows) {
        await h.clickhouse.insertEncoded(table, rows);
        // Accepted by ClickHouse, then the process "dies" before committing offsets.
        if (table === 'events' && rows.length > 0 && failures-- > 0) throw new Error('simulated crash after insert');
      },
    };
    const isolated = await startIngestHarness();
    try {
      const uuids = await isolated.send(Array.from({ length: 20 }, (_, i) => ({ event: 'replayed', distinct_id: `crash-${i % 3}` })));
      await isolated.startConsumer(flaky);
      const rows = await isolated.waitForEvents(20);
      expect(rows.map((r) => r.uuid).sort()).toEqual([...uuids].sort());
      expect(failures).toBeLessThan(1);
      const raw = await isolated.clickhouse.query<{ c: string }>(sql`SELECT count() AS c FROM events WHERE team_id = ${isolated.tenant.project.id}`);
      expect(Number(raw[0]!.c)).toBeGreaterThanOrEqual(20);
    } finally {
      await isolated.close();
    }
  });

  it('writes the ClickHouse copies of person changes that committed just before the process died', async () => {
    const isolated = await startIngestHarness();
    try {
      const [anon, user] = [id('outbox-anon'), id('outbox-user')];
      await isolated.send([
        { event: 'page', distinct_id: anon },
        { event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon, $set: { email: 'o@x.io' } } },
      ]);
      let died = false;
      // The first attempt commits the persons in Postgres, then its rows are lost as if the
      // process died before the insert; the replay finds the persons already changed.
      await isolated.startConsumer(undefined, (processor) => ({
        async processBatch(messages, rows, deadLetters) {
          if (died) return processor.processBatch(messages, rows, deadLetters);
          await processor.processBatch(messages, new RowBuffer(), []);
          died = true;
          throw Object.assign(new Error('simulated death after the Postgres commit'), { code: 'ECONNRESET' });
        },
      }));
      await isolated.waitForEvents(2);
      const copies = () =>
        isolated.clickhouse.query<{ distinct_id: string }>(
          sql`SELECT distinct_id FROM person_distinct_id WHERE team_id = ${isolated.tenant.project.id} AND distinct_id IN (${anon}, ${user})`,
        );
      expect(await copies()).toEqual([]);

      const outbox = new PersonOutbox({
        pool: isolated.pool,
        writer: new RowWriter(isolated.clickhouse, { maxRowsPerInsert: 1_000 }),
        sendRefusedRows: async () => undefined,
        personCache: new PersonCache(isolated.redis),
        logger: createLogger('outbox-test', 'silent'),
        staleAfterMs: 0,
      });
      expect(await outbox.sweep()).toBeGreaterThanOrEqual(1);
      expect((await copies()).map((r) => r.distinct_id).sort()).toEqual([anon, user].sort());
    } finally {
      await isolated.close();
    }
  });
});
