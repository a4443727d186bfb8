import type { EncodedJsonFields } from '@tributary/clickhouse';
import type { PersonCache } from '@tributary/control-plane';
import { groupByPersons, type EventOutcome, type PersonAfterEvent } from '@tributary/ingestion';
import type { Logger } from '@tributary/logger';
import { propertiesJson } from '@tributary/persons';
import { withTransaction, type Pool } from '@tributary/postgres';
import type { RowBuffer } from '../clickhouse-rows.js';
import type { DeadLetter } from '../dead-letters.js';
import type { Prepared, RecordedPerson } from '../event-memory.js';
import { runIsolated, splitByPersonsThenEvents } from '../failure-policy.js';
import { groupBy } from '../group-by.js';
import { applyPersonChunk, type PersonChunkChanges } from '../persons/apply-person-chunk.js';
import { recordOutboxEntry } from '../persons/person-outbox.js';

export interface ApplyPersonsDeps {
  pool: Pool;
  personCache: PersonCache;
  logger: Logger;
  /** Attempts at work that conflicts with concurrent transactions (CONFLICT_ATTEMPTS unless a test sets it). */
  conflictAttempts?: number;
}

export type PersonOutcome = EventOutcome<RecordedPerson>;

/**
 * Applies every project's persons of these events in one transaction, which also records the
 * ClickHouse copies the changes owe (see PersonOutbox).
 */
async function applyInOneTransaction(
  pool: Pool,
  events: readonly Prepared[],
  keep: (person: PersonAfterEvent) => RecordedPerson,
): Promise<{ changes: PersonChunkChanges<RecordedPerson>; outboxId: number | null }> {
  const byTeam = groupBy(events.keys(), (i) => events[i]!.teamId, (i) => i);
  return withTransaction(pool, async (client) => {
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

/**
 * The persons step: each event's person outcome, in order, null for an event dead-lettered here.
 * The whole chunk is applied at once (one transaction, a fixed number of statements per
 * project); failures go as failure-policy.ts says, split by persons, then by event.
 */
export function createApplyPersonsStep(deps: ApplyPersonsDeps) {
  return async (prepared: readonly Prepared[], rows: RowBuffer, deadLetters: DeadLetter[], personFields: EncodedJsonFields): Promise<(PersonOutcome | null)[]> => {
    const outcomes: (PersonOutcome | null)[] = new Array(prepared.length).fill(null);
    if (prepared.length === 0) return outcomes;
    const keep = (person: PersonAfterEvent): RecordedPerson => ({ uuid: person.uuid, propertiesField: personFields.add(propertiesJson(person.properties)), createdAt: person.createdAt });
    await runIsolated<number, void>(
      prepared.map((_, i) => i),
      {
        level: 'persons',
        conflictAttempts: deps.conflictAttempts,
        run: async (indexes) => {
          // Attempts run one after another: a failed one's fields are taken back, so however often a
          // chunk is tried and split, it holds the fields of the outcomes its rows take and no more.
          const mark = personFields.mark();
          let applied;
          try {
            applied = await applyInOneTransaction(deps.pool, indexes.map((i) => prepared[i]!), keep);
          } catch (error) {
            personFields.rewind(mark);
            throw error;
          }
          const { changes, outboxId } = applied;
          indexes.forEach((index, k) => (outcomes[index] = changes.outcomes[k]!));
          for (const row of changes.personRows) rows.persons.add(row);
          for (const row of changes.distinctIdRows) rows.distinctIds.add(row);
          if (outboxId !== null) rows.outbox.push(outboxId);
          await deps.personCache.setMany(changes.cache).catch((error: unknown) => deps.logger.warn({ err: error }, 'person cache not updated'));
        },
        split: splitByPersonsThenEvents((indexes) => groupByPersons(indexes.map((i) => ({ teamId: prepared[i]!.teamId, event: prepared[i]!.person }))).map((group) => group.map((k) => indexes[k]!))),
        combine: () => undefined,
        deadLetter: (index, error) => void deadLetters.push({ message: prepared[index]!.message, reason: `person changes failed: ${error instanceof Error ? error.message : String(error)}` }),
        // A store that is away is the messages level's to wait out.
        wait: (error) => Promise.reject(error),
        splitting: (error, events) => deps.logger.warn({ err: error, events }, 'person changes failed; splitting the work'),
      },
    );
    return outcomes;
  };
}
