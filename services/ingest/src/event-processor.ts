import type { KafkaMessage } from 'kafkajs';
import { formatDateTime } from '@tributary/clickhouse';
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


/** Turns each Kafka message into rows: person, distinct id, group and warning rows, then the event. */
export class EventProcessor implements MessageProcessor {
  private readonly clock: () => Date;

  constructor(private readonly deps: EventProcessorDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  async process(message: KafkaMessage, rows: RowBuffer, deadLetters: DeadLetter[]): Promise<void> {
    const decoded = decodeCaptureMessage(message.value);
    if (!decoded.ok) {
      deadLetters.push({ message, reason: decoded.reason });
      return;
    }
    const maxAttempts = this.deps.maxAttempts ?? 3;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.processCapture(decoded.message, rows, (reason) => deadLetters.push({ message, reason }));
        return;
      } catch (error) {
        if (isStoreUnavailable(error)) throw error;
        const retryable = error instanceof ConcurrentClaimError || TRANSIENT_PG_CODES.has((error as { code?: string }).code ?? '');
        if (attempt >= maxAttempts && !retryable) {
          deadLetters.push({ message, reason: `failed ${attempt} times: ${(error as Error).message}` });
          return;
        }
        if (attempt >= maxAttempts * 3) throw error;
        this.deps.logger.debug({ err: error, attempt }, 'retrying message');
      }
    }
  }

  private async processCapture(message: CaptureMessage, rows: RowBuffer, deadLetter: (reason: string) => void): Promise<void> {
    const parsed = parseEvent(message);
    if (parsed.kind === 'dlq') return deadLetter(parsed.reason);
    if (parsed.kind === 'drop') return;
    const project = await this.deps.tokens.resolve(message.token);
    if (!project) {
      this.deps.logger.warn({ uuid: message.uuid }, 'event for a project that no longer exists dropped');
      return;
    }
    const teamId = project.id;
    const now = new Date(message.now);
    const processedAt = this.clock();
    const warn = (type: string, details: Record<string, unknown>) =>
      rows.warnings.push({ team_id: teamId, source: 'ingest', type, details: JSON.stringify({ ...details, eventUuid: message.uuid }), timestamp: formatDateTime(processedAt) });

    const computed = computeTimestamp({
      timestamp: parsed.event.timestamp,
      offset: parsed.event.offset,
      sentAt: message.sent_at ? new Date(message.sent_at) : null,
      now,
    });
    if (computed.warning) warn(computed.warning.type, computed.warning.details);
    const survey = surveyWarning(parsed.event);
    if (survey) warn(survey.type, survey.details);

    let event: RawEvent = parsed.event;
    let personUuid: string;
    let personProperties: Record<string, unknown> = {};
    let personCreatedAt = computed.timestamp;
    if (!processesPersonProfile(event.properties)) {
      if (PERSON_EVENTS.has(event.event)) return;
      event = stripPersonUpdates(event);
      const existing = await this.existingPerson(teamId, event.distinct_id);
      personUuid = existing?.uuid ?? personlessPersonId(teamId, event.distinct_id);
      if (existing) {
        personProperties = existing.properties;
        personCreatedAt = existing.created_at;
      }
    } else {
      const updates = extractPersonUpdates(event);
      const unchanged = await this.personUnchangedBy(teamId, event, updates);
      if (unchanged) {
        personUuid = unchanged.uuid;
        personProperties = unchanged.properties;
        personCreatedAt = unchanged.created_at;
      } else {
        const changes = await withTransaction(this.deps.pool, (client) =>
          applyPersonChanges(client, {
            teamId,
            event: event.event,
            distinctId: event.distinct_id,
            properties: event.properties,
            updates,
            timestamp: computed.timestamp,
          }),
        );
        await this.recordPersonChanges(teamId, changes, rows);
        for (const w of changes.warnings) warn(w.type, w.details);
        personUuid = changes.person.uuid;
        personProperties = changes.person.properties;
        personCreatedAt = changes.person.created_at;
      }
    }

    if (event.event === '$groupidentify') {
      const identify = readGroupIdentify(event.properties);
      if (!identify.ok) warn('invalid_groupidentify', { reason: identify.warning });
      else {
        const index = await this.deps.groups.indexFor(teamId, identify.groupType);
        if (index === null) warn('group_type_limit_reached', { groupType: identify.groupType });
        else {
          const group = await this.deps.groups.upsert(teamId, index, identify.groupKey, identify.properties, computed.timestamp);
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

    rows.events.push({
      uuid: message.uuid,
      event: event.event,
      properties: JSON.stringify(event.properties),
      timestamp: formatDateTime(computed.timestamp),
      timestamp_ms: computed.timestamp.getUTCMilliseconds(),
      team_id: teamId,
      distinct_id: event.distinct_id,
      elements_chain: elementsChain,
      created_at: formatDateTime(processedAt),
      person_id: personUuid,
      person_properties: JSON.stringify(personProperties),
      person_created_at: formatDateTime(personCreatedAt),
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
    for (const person of changes.upserted) {
      rows.persons.push({
        id: person.uuid,
        created_at: formatDateTime(person.created_at),
        team_id: teamId,
        properties: JSON.stringify(person.properties),
        is_identified: person.is_identified ? 1 : 0,
        is_deleted: 0,
        version: person.version,
      });
    }
    for (const person of changes.deleted) {
      rows.persons.push({ id: person.uuid, created_at: formatDateTime(person.created_at), team_id: teamId, properties: '{}', is_identified: 0, is_deleted: 1, version: person.version });
    }
    for (const d of changes.distinctIds) {
      rows.distinctIds.push({ team_id: teamId, distinct_id: d.distinctId, person_id: d.personUuid, is_deleted: 0, version: d.version });
    }
    if (changes.upserted.length > 0 || changes.distinctIds.length > 0) {
      const distinctIds = await this.deps.pool.query<{ distinct_id: string }>('SELECT distinct_id FROM person_distinct_ids WHERE person_id = $1', [changes.person.id]);
      await this.deps.personCache
        .set(teamId, distinctIds.rows.map((r) => r.distinct_id), { personId: changes.person.id, personUuid: changes.person.uuid, properties: changes.person.properties })
        .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'person cache not updated'));
    }
  }
}
