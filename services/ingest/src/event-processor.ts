import type { KafkaMessage } from 'kafkajs';
import { EncodedJsonFields, formatDateTime, RowHeads } from '@tributary/clickhouse';
import type { PersonCache, TokenResolver } from '@tributary/control-plane';
import type { GeoIp } from '@tributary/geoip';
import {
  NO_WARNINGS,
  PERSON_EVENTS,
  addressOf,
  chunkEventOf,
  computeTimestamp,
  groupByPersons,
  groupColumns,
  groupTypesOf,
  mergeGroupProperties,
  parseEvent,
  processesPersonProfile,
  readGroupIdentify,
  stripPersonUpdates,
  surveyWarning,
  type ChunkEvent,
  type EventOutcome,
  type GroupIdentify,
  type PersonAfterEvent,
  type RawEvent,
  withGeoip,
} from '@tributary/ingestion';
import { decodeMessageEvents, type CaptureMessage } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { propertiesJson } from '@tributary/persons';
import { withTransaction, type Pool } from '@tributary/postgres';
import { EVENT_HEAD_COLUMNS, type EventRowOut, type RowBuffer } from './clickhouse-rows.js';
import type { GroupStore } from './groups/group-store.js';
import type { DeadLetter } from './dead-letters.js';
import type { MessageProcessor } from './message-processor.js';
import { applyPersonChunk, type PersonChunkChanges } from './persons/apply-person-chunk.js';
import { groupBy } from './group-by.js';
import { recordOutboxEntry } from './persons/person-outbox.js';
import { classifyFailure, retryConflicts } from './retry-policy.js';

export interface EventProcessorDeps {
  pool: Pool;
  tokens: Pick<TokenResolver, 'resolve'>;
  groups: GroupStore;
  personCache: PersonCache;
  geoip: GeoIp;
  logger: Logger;
  clock?: () => Date;
  /** Attempts at work that conflicts with concurrent transactions before it is split up or dead-lettered. */
  maxAttempts?: number;
}

interface Warning {
  type: string;
  details: Record<string, unknown>;
}

type EventHeads = RowHeads<EventRowOut, (typeof EVENT_HEAD_COLUMNS)[number]>;

/**
 * What an event's row needs of its person, kept from when the event is applied until the row is
 * completed: the properties already encoded, by their number in the chunk's EncodedJsonFields.
 * A chunk's persons are applied before its Postgres statements run, and its rows completed after
 * them; nearly every event leaves its person with properties of its own (device and page
 * properties are set each time), and outcomes that held those objects kept one per event alive
 * through the round trips, long enough to be copied into V8's old generation and marked there.
 */
interface RecordedPerson {
  uuid: string;
  propertiesField: number;
  createdAt: Date;
}

type Outcome = EventOutcome<RecordedPerson>;

/**
 * An event ready for its person: parsed, its project known, its timestamp computed. It keeps
 * only what the later steps read of the parsed event, the columns of its row that need no
 * person already encoded: a chunk's events wait through the Postgres round trips of their
 * persons, and parsed events kept that long outlived the young generation's collections and
 * were copied into the old one (a fifth of ingest's time went to garbage collection). Let go
 * here, they die young.
 */
interface Prepared {
  message: KafkaMessage;
  uuid: string;
  teamId: number;
  timestamp: Date;
  /** When ingest took the chunk, as ClickHouse reads it. */
  processedAt: string;
  /** NO_WARNINGS for nearly every event (an array of its own each was kept as long as its chunk); replaced, never added to. */
  warnings: readonly Warning[];
  /** Where the first columns of its event row are (see RowHeads). */
  head: number;
  /** The `$groups` property, read for the group columns once the chunk's group types are known. */
  groups: unknown;
  /** What applying the event to its person reads. */
  person: ChunkEvent;
  /** Null for any event but `$groupidentify`. */
  groupIdentify: GroupIdentify | null;
}

/** Remembers a function's answer per object, for as long as the object lives. */
class Memo<K extends object, V> {
  private readonly answers = new WeakMap<K, V>();

  of(key: K, compute: (key: K) => V): V {
    let value = this.answers.get(key);
    if (value === undefined) {
      value = compute(key);
      this.answers.set(key, value);
    }
    return value;
  }
}

/** The event's `elements_chain`, or as `$elements_chain` in its properties. */
function elementsChainOf(event: RawEvent): string {
  if (typeof event.elements_chain === 'string') return event.elements_chain;
  return typeof event.properties.$elements_chain === 'string' ? event.properties.$elements_chain : '';
}

/**
 * Turns a partition's chunk of Kafka messages into rows. Persons are applied for the whole chunk
 * at once (one transaction, a fixed number of statements per project); when that keeps failing
 * for a reason other than a store being away, the chunk is split into groups of events that
 * touch the same persons, then into single events, so that one bad event is dead-lettered alone.
 */
export class EventProcessor implements MessageProcessor {
  private readonly clock: () => Date;
  private readonly maxAttempts: number;
  // Consecutive events of a person share its creation time object, so it is formatted once.
  private readonly personCreatedAt = new Memo<Date, string>();

  constructor(private readonly deps: EventProcessorDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.maxAttempts = deps.maxAttempts ?? 5;
  }

  async processBatch(messages: readonly KafkaMessage[], rows: RowBuffer, deadLetters: DeadLetter[]): Promise<void> {
    const heads: EventHeads = new RowHeads(rows.events, EVENT_HEAD_COLUMNS);
    const personFields = new EncodedJsonFields();
    try {
      await this.processInto(messages, rows, deadLetters, heads, personFields);
    } finally {
      heads.release();
      personFields.release();
    }
  }

  private async processInto(messages: readonly KafkaMessage[], rows: RowBuffer, deadLetters: DeadLetter[], heads: EventHeads, personFields: EncodedJsonFields): Promise<void> {
    const prepared: Prepared[] = [];
    const processedAt = formatDateTime(this.clock());
    for (const source of messages) {
      // A message may carry several events; each stands as a message of its own, for its dead letter.
      for (const { decoded, message } of decodeMessageEvents(source)) {
        if (!decoded.ok) {
          deadLetters.push({ message, reason: decoded.reason });
          continue;
        }
        const ready = await this.prepare(message, decoded.message, processedAt, heads, (reason) => deadLetters.push({ message, reason }));
        if (ready) prepared.push(ready);
      }
    }
    const outcomes = await this.persons(prepared, rows, deadLetters, personFields);
    const kept = prepared.filter((_, i) => outcomes[i]);
    await this.groupIdentifies(kept, rows);
    const groupTypes = await this.groupTypes(kept);
    for (let i = 0; i < prepared.length; i += 1) {
      const outcome = outcomes[i];
      if (outcome) this.eventRow(prepared[i]!, outcome, groupTypes.get(prepared[i]!.teamId)!, heads, personFields, rows);
    }
  }

  /**
   * `$groupidentify` events of the chunk: each group's `$group_set`s merged in event order, then
   * every group written in one statement. Problems become warnings on the event.
   */
  private async groupIdentifies(prepared: readonly Prepared[], rows: RowBuffer): Promise<void> {
    const merged = new Map<string, { teamId: number; index: number; key: string; properties: Record<string, unknown>; createdAt: Date }>();
    for (const p of prepared) {
      const identify = p.groupIdentify;
      if (!identify) continue;
      if (!identify.ok) {
        p.warnings = [...p.warnings, { type: 'invalid_groupidentify', details: { reason: identify.warning } }];
        continue;
      }
      const index = await this.deps.groups.indexFor(p.teamId, identify.groupType);
      if (index === null) {
        p.warnings = [...p.warnings, { type: 'group_type_limit_reached', details: { groupType: identify.groupType } }];
        continue;
      }
      const k = `${p.teamId}\u0000${index}\u0000${identify.groupKey}`;
      const earlier = merged.get(k);
      merged.set(k, { teamId: p.teamId, index, key: identify.groupKey, properties: mergeGroupProperties(earlier?.properties ?? {}, identify.properties).properties, createdAt: earlier?.createdAt ?? p.timestamp });
    }
    for (const group of await this.deps.groups.upsertMany([...merged.values()])) {
      rows.groups.add({
        group_type_index: group.group_type_index,
        group_key: group.group_key,
        created_at: formatDateTime(group.created_at),
        team_id: group.team_id,
        group_properties: JSON.stringify(group.properties),
        version: group.version,
      });
    }
  }

  /**
   * Each project's group types once the chunk's `$groups` are read: a type new to its project is
   * given the next free index on first use, as PostHog does, so an event can name a group before
   * any `$groupidentify` of its type. A project's mapping is looked up once, not once per event.
   */
  private async groupTypes(prepared: readonly Prepared[]): Promise<Map<number, Map<string, number>>> {
    const groupTypes = new Map<number, Map<string, number>>();
    for (const p of prepared) {
      let mapping = groupTypes.get(p.teamId) ?? (await this.deps.groups.mapping(p.teamId));
      for (const type of groupTypesOf(p.groups)) {
        // A sixth type gets no index; its link is dropped with a warning when the row is written.
        if (!mapping.has(type) && (await this.deps.groups.indexFor(p.teamId, type)) !== null) mapping = await this.deps.groups.mapping(p.teamId);
      }
      groupTypes.set(p.teamId, mapping);
    }
    return groupTypes;
  }

  /** Parsing, project and timestamp: everything about an event that needs no person. */
  private async prepare(
    message: KafkaMessage,
    capture: CaptureMessage,
    processedAt: string,
    heads: EventHeads,
    deadLetter: (reason: string) => void,
  ): Promise<Prepared | null> {
    const parsed = parseEvent(capture);
    if (parsed.kind === 'dlq') {
      deadLetter(parsed.reason);
      return null;
    }
    if (parsed.kind === 'drop') return null;
    const project = await this.deps.tokens.resolve(capture.token);
    if (!project) {
      this.deps.logger.warn({ uuid: capture.uuid }, 'event for a project that no longer exists dropped');
      return null;
    }
    let warnings = NO_WARNINGS;
    const computed = computeTimestamp({
      timestamp: parsed.event.timestamp,
      offset: parsed.event.offset,
      sentAt: capture.sent_at ? new Date(capture.sent_at) : null,
      now: new Date(capture.now),
    });
    if (computed.warning) warnings = [computed.warning];
    const survey = surveyWarning(parsed.event);
    if (survey) warnings = [...warnings, survey];
    let event = withGeoip(parsed.event, this.deps.geoip.properties(addressOf(parsed.event, capture.ip)));
    if (!processesPersonProfile(event.properties)) {
      if (PERSON_EVENTS.has(event.event)) return null;
      event = stripPersonUpdates(event);
    }
    return {
      message,
      uuid: capture.uuid,
      teamId: project.id,
      timestamp: computed.timestamp,
      processedAt,
      warnings,
      head: heads.add({
        uuid: capture.uuid,
        event: event.event,
        properties: JSON.stringify(event.properties),
        timestamp: formatDateTime(computed.timestamp),
        timestamp_ms: computed.timestamp.getUTCMilliseconds(),
        team_id: project.id,
        distinct_id: event.distinct_id,
        elements_chain: elementsChainOf(event),
        created_at: processedAt,
      }),
      groups: event.properties.$groups,
      person: chunkEventOf(event, computed.timestamp),
      groupIdentify: event.event === '$groupidentify' ? readGroupIdentify(event.properties) : null,
    };
  }

  /** Each event's person outcome, in order; null for an event dead-lettered here. */
  private async persons(prepared: readonly Prepared[], rows: RowBuffer, deadLetters: DeadLetter[], personFields: EncodedJsonFields): Promise<(Outcome | null)[]> {
    const outcomes: (Outcome | null)[] = new Array(prepared.length).fill(null);
    const keep = (person: PersonAfterEvent): RecordedPerson => ({ uuid: person.uuid, propertiesField: personFields.add(propertiesJson(person.properties)), createdAt: person.createdAt });
    // Attempts run one after another: a failed one's fields are taken back, so however often a
    // chunk is tried and split, it holds the fields of the outcomes its rows take and no more.
    const attempt = async (events: readonly Prepared[]) => {
      const mark = personFields.mark();
      try {
        return await this.applyPersons(events, keep);
      } catch (error) {
        personFields.rewind(mark);
        throw error;
      }
    };
    const apply = async (indexes: readonly number[]) => {
      const { changes, outboxId } = await retryConflicts(() => attempt(indexes.map((i) => prepared[i]!)), this.maxAttempts, this.deps.logger);
      indexes.forEach((index, k) => (outcomes[index] = changes.outcomes[k]!));
      for (const row of changes.personRows) rows.persons.add(row);
      for (const row of changes.distinctIdRows) rows.distinctIds.add(row);
      if (outboxId !== null) rows.outbox.push(outboxId);
      await this.deps.personCache.setMany(changes.cache).catch((error: unknown) => this.deps.logger.warn({ err: error }, 'person cache not updated'));
    };
    const all = prepared.map((_, i) => i);
    if (all.length === 0 || (await this.tryApply(all, apply))) return outcomes;
    const groups = groupByPersons(prepared.map((p) => ({ teamId: p.teamId, event: p.person })));
    for (const group of groups) {
      if (await this.tryApply(group, apply)) continue;
      for (const index of group) {
        if (await this.tryApply([index], apply)) continue;
        deadLetters.push({ message: prepared[index]!.message, reason: `person changes failed ${this.maxAttempts} times` });
      }
    }
    return outcomes;
  }

  /** False when the work failed for a reason of its own; a store that is away is thrown, to wait and run again. */
  private async tryApply(indexes: readonly number[], apply: (indexes: readonly number[]) => Promise<void>): Promise<boolean> {
    try {
      await apply(indexes);
      return true;
    } catch (error) {
      if (classifyFailure(error) === 'unavailable') throw error;
      this.deps.logger.warn({ err: error, events: indexes.length }, 'person changes failed; splitting the work');
      return false;
    }
  }

  /**
   * Applies the persons of these events, every project's in the same transaction, which also
   * records the ClickHouse copies the changes owe (see PersonOutbox).
   */
  private async applyPersons(
    events: readonly Prepared[],
    keep: (person: PersonAfterEvent) => RecordedPerson,
  ): Promise<{ changes: PersonChunkChanges<RecordedPerson>; outboxId: number | null }> {
    const byTeam = groupBy(events.keys(), (i) => events[i]!.teamId, (i) => i);
    return withTransaction(this.deps.pool, async (client) => {
      const merged: PersonChunkChanges<RecordedPerson> = { outcomes: new Array(events.length), personRows: [], distinctIdRows: [], cache: [] };
      for (const [teamId, indexes] of [...byTeam].sort(([a], [b]) => a - b)) {
        const changes = await applyPersonChunk(client, teamId, indexes.map((i) => events[i]!.person), keep);
        indexes.forEach((index, k) => (merged.outcomes[index] = changes.outcomes[k]!));
        merged.personRows.push(...changes.personRows);
        merged.distinctIdRows.push(...changes.distinctIdRows);
        merged.cache.push(...changes.cache);
      }
      const outboxId = await recordOutboxEntry(client, {
        persons: merged.personRows.filter((row) => row.is_deleted === 0).map((row) => row.id),
        deleted: merged.personRows.filter((row) => row.is_deleted === 1),
      });
      return { changes: merged, outboxId };
    });
  }

  /** Warnings and the event row itself, once the event's person is known. */
  private eventRow(p: Prepared, outcome: Outcome, groupTypes: Map<string, number>, heads: EventHeads, personFields: EncodedJsonFields, rows: RowBuffer): void {
    const { teamId, processedAt } = p;
    const person = outcome.person;
    let warnings: readonly Warning[] = outcome.warnings.length === 0 ? p.warnings : [...p.warnings, ...outcome.warnings];
    const groups = groupColumns(p.groups, groupTypes);
    for (const groupType of groupTypesOf(p.groups)) {
      if (!groupTypes.has(groupType)) warnings = [...warnings, { type: 'group_type_limit_reached', details: { groupType } }];
    }
    for (const w of warnings) {
      rows.addWarning({ team_id: teamId, source: 'ingest', type: w.type, details: JSON.stringify({ ...w.details, eventUuid: p.uuid }), timestamp: processedAt });
    }
    heads.complete(p.head, {
      person_id: person.uuid,
      person_properties: personFields.field(person.propertiesField),
      person_created_at: this.personCreatedAt.of(person.createdAt, formatDateTime),
      group_0: groups[0],
      group_1: groups[1],
      group_2: groups[2],
      group_3: groups[3],
      group_4: groups[4],
    });
  }
}
