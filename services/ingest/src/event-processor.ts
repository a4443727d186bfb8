import type { KafkaMessage } from 'kafkajs';
import { formatDateTime } from '@tributary/clickhouse';
import type { PersonCache, TokenResolver } from '@tributary/control-plane';
import type { GeoIp } from '@tributary/geoip';
import { decodeMessageEvents } from '@tributary/kafka';
import type { Logger } from '@tributary/logger';
import type { Pool } from '@tributary/postgres';
import type { RowBuffer } from './clickhouse-rows.js';
import type { DeadLetter } from './dead-letters.js';
import type { DefinitionsRecorder } from './definitions/definitions-recorder.js';
import { withChunkMemory, type Prepared } from './event-memory.js';
import type { GroupStore } from './groups/group-store.js';
import type { MessageProcessor } from './message-processor.js';
import { createApplyGroupsStep } from './steps/apply-groups.js';
import { createApplyPersonsStep } from './steps/apply-persons.js';
import { createPrepareEventStep } from './steps/prepare-event.js';
import { createWriteEventRowStep } from './steps/write-event-row.js';

export interface EventProcessorDeps {
  pool: Pool;
  /** What this process wrote to the definitions tables already (see DefinitionsRecorder). */
  definitions: DefinitionsRecorder;
  tokens: Pick<TokenResolver, 'resolve'>;
  groups: GroupStore;
  personCache: PersonCache;
  geoip: GeoIp;
  logger: Logger;
  clock?: () => Date;
  /** Attempts at person changes that conflict with concurrent transactions (see failure-policy.ts). */
  conflictAttempts?: number;
}

/**
 * Turns a partition's chunk of Kafka messages into rows, one named step after another:
 *
 * 1. decode: each message's events, each standing as a message of its own for its dead letter;
 * 2. prepare: parse, resolve the team from the token, compute the timestamp;
 * 3. persons: the chunk's person changes, in one transaction;
 * 4. groups: `$groupidentify`s applied, each project's group types read;
 * 5. row: each kept event's row completed with its person and groups, and the definitions it
 *    brings listed to be written beside the rows.
 *
 * PartitionPipeline then writes the rows (and the dead letters) and acknowledges the chunk by
 * committing its offsets. What fails, and where a bad event is dead-lettered, is failure-policy.ts's
 * to say; how the chunk is held in memory between steps, event-memory.ts's.
 */
export class EventProcessor implements MessageProcessor {
  private readonly clock: () => Date;
  private readonly definitions: DefinitionsRecorder;
  private readonly prepare: ReturnType<typeof createPrepareEventStep>;
  private readonly applyPersons: ReturnType<typeof createApplyPersonsStep>;
  private readonly applyGroups: ReturnType<typeof createApplyGroupsStep>;
  private readonly writeRow: ReturnType<typeof createWriteEventRowStep>;

  constructor(deps: EventProcessorDeps) {
    this.clock = deps.clock ?? (() => new Date());
    this.definitions = deps.definitions;
    this.prepare = createPrepareEventStep(deps);
    this.applyPersons = createApplyPersonsStep(deps);
    this.applyGroups = createApplyGroupsStep(deps.groups);
    this.writeRow = createWriteEventRowStep();
  }

  processBatch(messages: readonly KafkaMessage[], rows: RowBuffer, deadLetters: DeadLetter[]): Promise<void> {
    return withChunkMemory(rows, async (memory) => {
      const prepared: Prepared[] = [];
      const processedAt = formatDateTime(this.clock());
      for (const source of messages) {
        for (const { decoded, message } of decodeMessageEvents(source)) {
          if (!decoded.ok) {
            deadLetters.push({ message, reason: decoded.reason });
            continue;
          }
          const result = await this.prepare(message, decoded.message, processedAt, memory.heads);
          if (result.kind === 'ok') prepared.push(result.event);
          else if (result.kind === 'dlq') deadLetters.push({ message, reason: result.reason });
        }
      }
      const outcomes = await this.applyPersons(prepared, rows, deadLetters, memory.personFields);
      const groupTypes = await this.applyGroups(prepared.filter((_, i) => outcomes[i]), rows);
      for (let i = 0; i < prepared.length; i += 1) {
        const outcome = outcomes[i];
        if (!outcome) continue;
        const p = prepared[i]!;
        const projectGroupTypes = groupTypes.get(p.teamId)!;
        this.writeRow(p, outcome, projectGroupTypes, memory, rows);
        if (p.definitions) rows.definitions.append(p.definitions);
        if (p.groupIdentify?.ok) {
          const index = projectGroupTypes.get(p.groupIdentify.groupType);
          if (index !== undefined) this.definitions.observeGroup(p.teamId, index, p.groupIdentify.properties, rows.definitions);
        }
      }
    });
  }
}
