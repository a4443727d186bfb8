import { setTimeout as sleep } from 'node:timers/promises';
import { inList, sql, type ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { createKafka, topicNames } from '@tributary/kafka';
import type { Consumer } from 'kafkajs';
import { createLogger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { IdentitySequence } from './load-generator.js';

/**
 * What the suite checks once the load has stopped and ingest has settled: every acknowledged
 * uuid stored exactly once, in ClickHouse (with the table's own deduplication, FINAL) and through
 * the events API (which dedupes at read time), no unacknowledged uuid stored twice, and the
 * persons of the identity sequences merged as they should be.
 */

export interface ApiTarget {
  frontUrl: string;
  projectId: number;
  personalApiKey: string;
}

export interface Verdict {
  lost: string[];
  duplicated: string[];
  personFailures: string[];
  notes: string[];
}

const SETTLE_QUIET_MS = 20_000;
const SETTLE_MAX_MS = 300_000;

/**
 * Waits until ingest owes ClickHouse no person copies: a process killed between its Postgres
 * commit and its insert leaves them in the outbox, which a live process writes within a minute or so.
 */
export async function drainOutbox(pool: Pool, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < SETTLE_MAX_MS) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM ingest_outbox');
    if (rows[0]!.n === 0) return;
    log(`settling: ${rows[0]!.n} person outbox entries still owed to ClickHouse`);
    await sleep(5000);
  }
}

/** Waits until every acknowledged uuid is in ClickHouse, or the count has not moved for a while. */
export async function settle(clickhouse: ClickHouse, teamId: number, expected: number, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  let last = -1;
  let lastChange = Date.now();
  while (Date.now() - started < SETTLE_MAX_MS) {
    const [row] = await clickhouse.query<{ n: string }>(sql`SELECT uniqExact(uuid) AS n FROM events WHERE team_id = ${teamId}`);
    const count = Number(row?.n ?? 0);
    if (count >= expected) return;
    if (count !== last) {
      last = count;
      lastChange = Date.now();
      log(`settling: ${count} of ${expected} acknowledged events stored`);
    } else if (Date.now() - lastChange > SETTLE_QUIET_MS) {
      return;
    }
    await sleep(2000);
  }
}

export async function verify(
  clickhouse: ClickHouse,
  api: ApiTarget,
  acked: ReadonlyMap<string, number>,
  abandoned: ReadonlySet<string>,
  sequences: readonly IdentitySequence[],
): Promise<Verdict> {
  const notes: string[] = [];
  const stored = new Map<string, number>();
  const rows = await clickhouse.query<{ uuid: string; copies: string }>(
    sql`SELECT toString(uuid) AS uuid, count() AS copies FROM events FINAL WHERE team_id = ${api.projectId} GROUP BY uuid`,
  );
  for (const row of rows) stored.set(row.uuid, Number(row.copies));
  const [raw] = await clickhouse.query<{ rows: string; uuids: string }>(sql`SELECT count() AS rows, uniqExact(uuid) AS uuids FROM events WHERE team_id = ${api.projectId}`);
  notes.push(`ClickHouse: ${raw?.uuids} distinct uuids in ${raw?.rows} rows before merges (replays that ReplacingMergeTree folds away)`);

  const listed = await listAllEvents(api);
  notes.push(`events API: ${listed.length} events listed`);
  const seen = new Map<string, number>();
  for (const id of listed) seen.set(id, (seen.get(id) ?? 0) + 1);

  const lost = new Set<string>();
  const duplicated = new Set<string>();
  for (const uuid of acked.keys()) {
    if (!stored.has(uuid) || !seen.has(uuid)) lost.add(uuid);
  }
  for (const [uuid, copies] of stored) if (copies > 1) duplicated.add(uuid);
  for (const [uuid, times] of seen) if (times > 1) duplicated.add(uuid);
  const abandonedStored = [...abandoned].filter((uuid) => stored.has(uuid)).length;
  notes.push(`${abandoned.size} events never acknowledged (sending stopped), ${abandonedStored} of them stored once`);
  if (listed.length !== seen.size) notes.push(`events API listed ${listed.length - seen.size} rows twice`);
  if (seen.size !== stored.size) notes.push(`events API count ${seen.size} differs from ClickHouse's ${stored.size}`);

  const personFailures = [...(await checkPersonsInClickHouse(clickhouse, api.projectId, sequences)), ...(await checkPersonsThroughApi(api, sequences))];
  return { lost: [...lost], duplicated: [...duplicated], personFailures, notes };
}

async function listAllEvents(api: ApiTarget): Promise<string[]> {
  const ids: string[] = [];
  let url: string | null = `${api.frontUrl}/api/projects/${api.projectId}/events/?limit=1000`;
  while (url) {
    const page = (await getJson(url, api.personalApiKey)) as { results: { id: string }[]; next: string | null };
    ids.push(...page.results.map((e) => e.id));
    url = page.next;
  }
  return ids;
}

async function checkPersonsInClickHouse(clickhouse: ClickHouse, teamId: number, sequences: readonly IdentitySequence[]): Promise<string[]> {
  const ids = sequences.flatMap((s) => [s.anonymous, s.user, s.alias]);
  const owner = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 3000) {
    const rows = await clickhouse.query<{ distinct_id: string; person_id: string }>(
      sql`SELECT distinct_id, toString(argMax(person_id, version)) AS person_id FROM person_distinct_id
          WHERE team_id = ${teamId} AND ${inList(sql`distinct_id`, ids.slice(i, i + 3000))}
          GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
    );
    for (const row of rows) owner.set(row.distinct_id, row.person_id);
  }
  const failures: string[] = [];
  for (const s of sequences) {
    const persons = new Set([s.anonymous, s.user, s.alias].map((id) => owner.get(id)));
    if (persons.size !== 1 || persons.has(undefined)) failures.push(`ClickHouse: ${s.user}'s distinct ids map to ${[...persons].join(', ')}`);
  }
  return failures;
}

async function checkPersonsThroughApi(api: ApiTarget, sequences: readonly IdentitySequence[]): Promise<string[]> {
  const failures: string[] = [];
  for (const s of sequences) {
    const page = (await getJson(`${api.frontUrl}/api/projects/${api.projectId}/persons/?distinct_id=${encodeURIComponent(s.alias)}`, api.personalApiKey)) as {
      results: { distinct_ids: string[]; properties: Record<string, unknown> }[];
    };
    const person = page.results[0];
    const missing = [s.anonymous, s.user, s.alias].filter((id) => !person?.distinct_ids.includes(id));
    if (page.results.length !== 1 || missing.length > 0) failures.push(`persons API: ${s.alias} has ${page.results.length} persons, missing ids ${missing.join(', ')}`);
    else if (person?.properties.email !== s.email || person.properties.first_alias !== s.alias) failures.push(`persons API: ${s.user}'s properties are ${JSON.stringify(person?.properties)}`);
  }
  return failures;
}

export async function getJson(url: string, personalApiKey: string): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, { headers: { authorization: `Bearer ${personalApiKey}` }, signal: AbortSignal.timeout(60_000) });
    if (response.ok) return response.json();
    if (attempt >= 5) throw new Error(`GET ${url}: ${response.status} ${await response.text()}`);
    await sleep(1000);
  }
}

type KafkaConfig = Pick<Config, 'kafkaBrokers' | 'kafkaClientId' | 'kafkaTopicPrefix'>;

/** A message that holds a uuid: `topic/partition@offset`, and its headers. */
export interface FoundMessage {
  at: string;
  headers: Record<string, string>;
}

/**
 * The last message of `topics` that holds each uuid, reading them from their first offset to
 * their last, or null when none does. `complete` is false when the topics were not read to their
 * end within a minute.
 */
async function findInTopics(config: KafkaConfig, topics: readonly string[], uuids: readonly string[]): Promise<{ found: Map<string, FoundMessage | null>; complete: boolean }> {
  const found = new Map<string, FoundMessage | null>(uuids.map((uuid) => [uuid, null]));
  if (uuids.length === 0) return { found, complete: true };
  const kafka = createKafka(config, createLogger('chaos-locate', 'silent'), 'chaos-locate');
  const admin = kafka.admin();
  const unread = new Map<string, number>();
  await admin.connect();
  try {
    for (const topic of topics) {
      for (const { partition, high } of await admin.fetchTopicOffsets(topic)) if (Number(high) > 0) unread.set(`${topic}/${partition}`, Number(high));
    }
  } finally {
    await admin.disconnect();
  }
  if (unread.size === 0) return { found, complete: true };
  const consumer = kafka.consumer({ groupId: `chaos-locate-${Date.now()}` });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    await readToTheirEnds(consumer, uuids, found, unread);
  } finally {
    await consumer.disconnect();
  }
  return { found, complete: unread.size === 0 };
}

/** Reads until every partition in `unread` is read to the offset it had, or a minute has passed. */
async function readToTheirEnds(consumer: Consumer, uuids: readonly string[], found: Map<string, FoundMessage | null>, unread: Map<string, number>): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    setTimeout(resolve, 60_000).unref();
    consumer
      .run({
        eachMessage: async ({ topic, partition, message }) => {
          const text = message.value?.toString('utf8') ?? '';
          for (const uuid of uuids) {
            if (!text.includes(uuid)) continue;
            const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]));
            found.set(uuid, { at: `${topic}/${partition}@${message.offset}`, headers });
          }
          const at = `${topic}/${partition}`;
          if (Number(message.offset) + 1 >= (unread.get(at) ?? Number.POSITIVE_INFINITY)) unread.delete(at);
          if (unread.size === 0) resolve();
        },
      })
      .catch(reject);
  });
}

/**
 * Where each lost uuid is in Kafka's event topics: `topic/partition@offset`, or null when no
 * message holds it. Found there, ingest lost it; missing, capture acknowledged events that Kafka
 * never kept (one run lost a request's 16 events that way, and this tells the next one apart
 * without reading the topics by hand).
 */
export async function locateInKafka(config: KafkaConfig, uuids: readonly string[]): Promise<{ found: Map<string, string | null>; complete: boolean }> {
  const names = topicNames(config.kafkaTopicPrefix);
  const { found, complete } = await findInTopics(config, [names.realtime, names.historical, names.overflow], uuids);
  return { found: new Map([...found].map(([uuid, message]) => [uuid, message?.at ?? null])), complete };
}

/** The dead letter that holds each uuid, with its headers, or null (see `findInTopics`). */
export async function findDeadLetters(config: KafkaConfig, uuids: readonly string[]): Promise<{ found: Map<string, FoundMessage | null>; complete: boolean }> {
  return findInTopics(config, [topicNames(config.kafkaTopicPrefix).deadLetter], uuids);
}
