import { formatDateTime } from '@tributary/clickhouse';
import { groupColumns, groupTypesOf } from '@tributary/ingestion';
import type { RowBuffer } from '../clickhouse-rows.js';
import { Memo, type ChunkMemory, type Prepared, type Warning } from '../event-memory.js';
import type { PersonOutcome } from './apply-persons.js';

/** The row step: an event's warnings and its row completed, once its person and group types are known. */
export function createWriteEventRowStep() {
  // Consecutive events of a person share its creation time object, so it is formatted once.
  const personCreatedAt = new Memo<Date, string>();
  return (p: Prepared, outcome: PersonOutcome, groupTypes: Map<string, number>, memory: ChunkMemory, rows: RowBuffer): void => {
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
    memory.heads.complete(p.head, {
      person_id: person.uuid,
      person_properties: memory.personFields.field(person.propertiesField),
      person_created_at: personCreatedAt.of(person.createdAt, formatDateTime),
      group_0: groups[0],
      group_1: groups[1],
      group_2: groups[2],
      group_3: groups[3],
      group_4: groups[4],
    });
  };
}
