import type { KafkaMessage } from 'kafkajs';
import { formatDateTime, type PersonRowOut } from '@tributary/clickhouse';
import type { PersonCache, TokenResolver } from '@tributary/control-plane';
import {
  PERSON_EVENTS,
  computeTimestamp,
  extractPersonUpdates,
  groupColumns,
  hasPersonUpdates,
  mergeIdsOf,
  parseEvent,
  personlessPersonId,
  planBatch,
  processesPersonProfile,
  readGroupIdentify,
  stripPersonUpdates,
  surveyWarning,
  type PersonUpdates,
  type RawEvent,
} from '@tributary/ingestion';
import { decodeCaptureMessage, type CaptureMessage } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import { withTransaction, type Pool } from '@tributary/postgres';
import type { RowBuffer } from './clickhouse-rows.js';
import type { GroupStore } from './groups/group-store.js';
import type { DeadLetter, MessageProcessor } from './ingest-consumer.js';
import { applyBulkPersonChanges } from './persons/apply-bulk-person-changes.js';
import { applyPersonChanges, ConcurrentClaimError, type PersonChanges } from './persons/apply-person-changes.js';
import type { PersonRecord } from './persons/person-store.js';

export interface EventProcessorDeps {
  pool: Pool;
  tokens: Pick<TokenResolver, 'resolve'>;
  groups: GroupStore;
  personCache: PersonCache;
  logger: Logger;
  clock?: () => Date;
  /** Attempts before a message that keeps failing goes to the dead-letter topic. */
  maxAttempts?: number;
}

/** Events that can mark a person identified even when no property changes. */
const IDENTITY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously']);

const TRANSIENT_PG_CODES = new Set(['40001', '40P01', '57P01', '57P03', '08000', '08003', '08006']);

/** Errors that say a store is away, not that this message is bad: the batch is retried instead. */
function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND'].includes(code) || code.startsWith('08') || code === '57P01';
}


interface Warning {
  type: string;
  details: Record<string, unknown>;
}

/** An event ready for its person: parsed, its project known, its timestamp computed. */
interface Prepared {
  message: KafkaMessage;
  uuid: string;
  event: RawEvent;
  teamId: number;
  timestamp: Date;
  processedAt: Date;
  warnings: Warning[];
  /** Set when the batch transaction already applied this event's person changes. */
  person?: EventPerson;
}

/** The person an event row records: as it is after the event. */
interface EventPerson {
  uuid: string;
  properties: Record<string, unknown>;
  createdAt: Date;
}

const personRow = (person: PersonRecord, deleted: boolean): PersonRowOut => ({
  id: person.uuid,
  created_at: formatDateTime(person.created_at),
  team_id: person.team_id,
  properties: deleted ? '{}' : JSON.stringify(person.properties),
  is_identified: !deleted && person.is_identified ? 1 : 0,
  is_deleted: deleted ? 1 : 0,
  version: person.version,
});

/** Turns each Kafka message into rows: person, distinct id, group and warning rows, then the event. */
export class EventProcessor implements MessageProcessor {
  private readonly clock: () => Date;

  constructor(private readonly deps: EventProcessorDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  async processBatch(messages: readonly KafkaMessage[], rows: RowBuffer, deadLetters: DeadLetter[]): Promise<void> {
    const prepared: Prepared[] = [];
    for (const message of messages) {
      const decoded = decodeCaptureMessage(message.value);
      if (!decoded.ok) {
        deadLetters.push({ message, reason: decoded.reason });
        continue;
      }
      const ready = await this.attempt(message, deadLetters, () => this.prepare(message, decoded.message, (reason) => deadLetters.push({ message, reason })));
      if (ready) prepared.push(ready);
    }
    const plan = planBatch(prepared.map((p) => ({ teamId: p.teamId, event: p.event.event, distinctId: p.event.distinct_id, properties: p.event.properties })));
    const together = plan.together.map((i) => prepared[i]!);
    const oneByOne = plan.oneByOne.map((i) => prepared[i]!);
    const persons = together.length > 0 ? await this.personsTogether(together, rows) : [];
    if (persons === null) oneByOne.unshift(...together);
    else together.forEach((p, i) => oneByOne.push({ ...p, person: persons[i]! }));
    for (const p of oneByOne) {
      await this.attempt(p.message, deadLetters, async () => {
        const person = p.person ?? (await this.personOne(p, rows));
        if (person) await this.finish(p, person, rows);
        return true;
      });
    }
  }

  /**
   * Runs one message's work, retrying what may pass next time; a message that keeps failing
   * goes to the dead-letter topic. A store that is away fails the whole batch instead, which
   * Kafka then delivers again.
   */
  private async attempt<T>(message: KafkaMessage, deadLetters: DeadLetter[], work: () => Promise<T | null>): Promise<T | null> {
    const maxAttempts = this.deps.maxAttempts ?? 3;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await work();
      } catch (error) {
        if (isStoreUnavailable(error)) throw error;
        const retryable = error instanceof ConcurrentClaimError || TRANSIENT_PG_CODES.has((error as { code?: string }).code ?? '');
        if (attempt >= maxAttempts && !retryable) {
          deadLetters.push({ message, reason: `failed ${attempt} times: ${(error as Error).message}` });
          return null;
        }
        if (attempt >= maxAttempts * 3) throw error;
        this.deps.logger.debug({ err: error, attempt }, 'retrying message');
      }
    }
  }

  /** Parsing, project and timestamp: everything about an event that needs no person. */
  private async prepare(message: KafkaMessage, capture: CaptureMessage, deadLetter: (reason: string) => void): Promise<Prepared | null> {
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
    const warnings: Warning[] = [];
    const computed = computeTimestamp({
      timestamp: parsed.event.timestamp,
      offset: parsed.event.offset,
      sentAt: capture.sent_at ? new Date(capture.sent_at) : null,
      now: new Date(capture.now),
    });
    if (computed.warning) warnings.push(computed.warning);
    const survey = surveyWarning(parsed.event);
    if (survey) warnings.push(survey);
    let event: RawEvent = parsed.event;
    if (!processesPersonProfile(event.properties)) {
      if (PERSON_EVENTS.has(event.event)) return null;
      event = stripPersonUpdates(event);
    }
    return { message, uuid: capture.uuid, event, teamId: project.id, timestamp: computed.timestamp, processedAt: this.clock(), warnings };
  }

  /** Person changes of many events in one transaction; null when that keeps failing, so they go one by one. */
  private async personsTogether(events: readonly Prepared[], rows: RowBuffer): Promise<EventPerson[] | null> {
    const inputs = events.map((p) => ({ teamId: p.teamId, distinctId: p.event.distinct_id, updates: extractPersonUpdates(p.event), timestamp: p.timestamp }));
    for (let attempt = 1; attempt <= (this.deps.maxAttempts ?? 3); attempt += 1) {
      try {
        const changes = await withTransaction(this.deps.pool, (client) => applyBulkPersonChanges(client, inputs));
        for (const person of changes.upserted) rows.persons.push(personRow(person, false));
        for (const d of changes.distinctIds) rows.distinctIds.push({ team_id: d.teamId, distinct_id: d.distinctId, person_id: d.personUuid, is_deleted: 0, version: d.version });
        await this.cachePersons(changes.upserted);
        return changes.after.map((person) => ({ uuid: person.uuid, properties: person.properties, createdAt: person.created_at }));
      } catch (error) {
        if (isStoreUnavailable(error)) throw error;
        this.deps.logger.debug({ err: error, attempt, events: events.length }, 'retrying the batch person transaction');
      }
    }
    return null;
  }

  /** One event's person, in a transaction of its own: identity events and the distinct ids they touch. */
  private async personOne(p: Prepared, rows: RowBuffer): Promise<EventPerson | null> {
    const { event, teamId } = p;
    if (!processesPersonProfile(event.properties)) {
      const existing = await this.existingPerson(teamId, event.distinct_id);
      return existing
        ? { uuid: existing.uuid, properties: existing.properties, createdAt: existing.created_at }
        : { uuid: personlessPersonId(teamId, event.distinct_id), properties: {}, createdAt: p.timestamp };
    }
    const updates = extractPersonUpdates(event);
    const unchanged = await this.personUnchangedBy(teamId, event, updates);
    if (unchanged) return { uuid: unchanged.uuid, properties: unchanged.properties, createdAt: unchanged.created_at };
    const changes = await withTransaction(this.deps.pool, (client) =>
      applyPersonChanges(client, { teamId, event: event.event, distinctId: event.distinct_id, properties: event.properties, updates, timestamp: p.timestamp }),
    );
    await this.recordPersonChanges(teamId, changes, rows);
    p.warnings.push(...changes.warnings);
    return { uuid: changes.person.uuid, properties: changes.person.properties, createdAt: changes.person.created_at };
  }

  /** Groups, warnings and the event row itself, once the event's person is known. */
  private async finish(p: Prepared, person: EventPerson, rows: RowBuffer): Promise<void> {
    const { event, teamId, processedAt } = p;
    const warnings = [...p.warnings];
    if (event.event === '$groupidentify') {
      const identify = readGroupIdentify(event.properties);
      if (!identify.ok) warnings.push({ type: 'invalid_groupidentify', details: { reason: identify.warning } });
      else {
        const index = await this.deps.groups.indexFor(teamId, identify.groupType);
        if (index === null) warnings.push({ type: 'group_type_limit_reached', details: { groupType: identify.groupType } });
        else {
          const group = await this.deps.groups.upsert(teamId, index, identify.groupKey, identify.properties, p.timestamp);
          rows.groups.push({
            group_type_index: index,
            group_key: group.group_key,
            created_at: formatDateTime(group.created_at),
            team_id: teamId,
            group_properties: JSON.stringify(group.properties),
            version: group.version,
          });
        }
      }
    }
    const groups = groupColumns(event.properties.$groups, await this.deps.groups.mapping(teamId));
    const elementsChain = typeof event.elements_chain === 'string' ? event.elements_chain : typeof event.properties.$elements_chain === 'string' ? event.properties.$elements_chain : '';
    for (const w of warnings) {
      rows.warnings.push({ team_id: teamId, source: 'ingest', type: w.type, details: JSON.stringify({ ...w.details, eventUuid: p.uuid }), timestamp: formatDateTime(processedAt) });
    }
    rows.events.push({
      uuid: p.uuid,
      event: event.event,
      properties: JSON.stringify(event.properties),
      timestamp: formatDateTime(p.timestamp),
      timestamp_ms: p.timestamp.getUTCMilliseconds(),
      team_id: teamId,
      distinct_id: event.distinct_id,
      elements_chain: elementsChain,
      created_at: formatDateTime(processedAt),
      person_id: person.uuid,
      person_properties: JSON.stringify(person.properties),
      person_created_at: formatDateTime(person.createdAt),
      group_0: groups[0],
      group_1: groups[1],
      group_2: groups[2],
      group_3: groups[3],
      group_4: groups[4],
      inserted_at: formatDateTime(processedAt),
    });
  }

  /**
   * An event with no person updates (typical of server-side events) leaves an existing person as
   * it is: one plain read replaces the locking transaction. Events that carry updates go straight
   * to the transaction, since browser events change the person (current URL and the like) so
   * often that a first unlocked look would mostly be a wasted query.
   */
  private async personUnchangedBy(teamId: number, event: RawEvent, updates: PersonUpdates): Promise<PersonRecord | null> {
    if (hasPersonUpdates(updates) || IDENTITY_EVENTS.has(event.event) || mergeIdsOf(event.event, event.distinct_id, event.properties)) return null;
    return this.existingPerson(teamId, event.distinct_id);
  }

  private async existingPerson(teamId: number, distinctId: string): Promise<PersonRecord | null> {
    const { rows } = await this.deps.pool.query<PersonRecord>(
      `SELECT p.id, p.uuid, p.team_id, p.properties, p.is_identified, p.created_at, p.version
         FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1 AND d.distinct_id = $2`,
      [teamId, distinctId],
    );
    return rows[0] ?? null;
  }

  private async recordPersonChanges(teamId: number, changes: PersonChanges, rows: RowBuffer): Promise<void> {
    for (const person of changes.upserted) rows.persons.push(personRow(person, false));
    for (const person of changes.deleted) rows.persons.push(personRow(person, true));
    for (const d of changes.distinctIds) {
      rows.distinctIds.push({ team_id: teamId, distinct_id: d.distinctId, person_id: d.personUuid, is_deleted: 0, version: d.version });
    }
    if (changes.upserted.length > 0 || changes.distinctIds.length > 0) await this.cachePersons([changes.person]);
  }

  /** Decide's person cache, under every distinct id of each person. A cache only: failures are logged. */
  private async cachePersons(persons: readonly PersonRecord[]): Promise<void> {
    if (persons.length === 0) return;
    const { rows } = await this.deps.pool.query<{ person_id: number; distinct_id: string }>(
      'SELECT person_id, distinct_id FROM person_distinct_ids WHERE person_id = ANY($1::bigint[])',
      [persons.map((p) => p.id)],
    );
    const idsOf = new Map<number, string[]>();
    for (const r of rows) idsOf.set(r.person_id, [...(idsOf.get(r.person_id) ?? []), r.distinct_id]);
    await this.deps.personCache
      .setMany(persons.map((person) => ({ teamId: person.team_id, distinctIds: idsOf.get(person.id) ?? [], person: { personId: person.id, personUuid: person.uuid, properties: person.properties } })))
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'person cache not updated'));
  }
}
