import type { Pool } from '@tributary/postgres';
import { USER_COLUMNS, type UserColumns } from '../organizations/organization-user.js';
import { minimalFlagJson, type MinimalFlag } from './minimal-flag.js';
import type { SurveyFields } from './survey-requests.js';
import { UuidRowStore } from './uuid-row-store.js';

/** The row with the flags it holds: the survey's own fields and which flags it shows through. */
export interface SurveyRecord extends SurveyFields {
  targeting_flag_id: number | null;
  internal_targeting_flag_id: number | null;
}

export interface SurveyRow extends Partial<UserColumns>, Omit<SurveyRecord, 'start_date' | 'end_date'> {
  id: string;
  team_id: number;
  start_date: Date | null;
  end_date: Date | null;
  created_by: number | null;
  created_at: Date;
  linked_flag: MinimalFlag | null;
  targeting_flag: MinimalFlag | null;
  internal_targeting_flag: MinimalFlag | null;
}

export class DuplicateSurveyNameError extends Error {}

const SELECT = `SELECT s.id, s.team_id, s.name, s.description, s.type, s.questions, s.appearance, s.conditions, s.linked_flag_id, s.targeting_flag_id,
  s.internal_targeting_flag_id, s.start_date, s.end_date, s.archived, s.responses_limit, s.schedule, s.enable_partial_responses, s.created_by, s.created_at,
  ${minimalFlagJson('s.linked_flag_id')} AS linked_flag, ${minimalFlagJson('s.targeting_flag_id')} AS targeting_flag,
  ${minimalFlagJson('s.internal_targeting_flag_id')} AS internal_targeting_flag, ${USER_COLUMNS}
  FROM surveys s LEFT JOIN users u ON u.id = s.created_by`;

/** Columns a write sets, in order: `$3` onwards after the id and team. */
const WRITTEN = ['name', 'description', 'type', 'questions', 'appearance', 'conditions', 'linked_flag_id', 'targeting_flag_id', 'internal_targeting_flag_id', 'start_date', 'end_date', 'archived', 'responses_limit', 'schedule', 'enable_partial_responses'] as const;

const valuesOf = (record: SurveyRecord) => WRITTEN.map((column) => (column === 'questions' ? JSON.stringify(record.questions) : record[column]));

function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  return write().catch((error: unknown) => {
    if ((error as { code?: string }).code === '23505') throw new DuplicateSurveyNameError(`There is already a survey named "${name}" in this project.`);
    throw error;
  });
}

/** A project's surveys in Postgres; decide reads the same table for posthog-js (see ProductLists). */
export class SurveyStore extends UuidRowStore<SurveyRow> {
  constructor(pool: Pool) {
    super(pool, { name: 'surveys', alias: 's', select: SELECT });
  }

  async create(teamId: number, id: string, record: SurveyRecord, createdBy: number): Promise<SurveyRow> {
    await uniqueName(record.name, () =>
      this.pool.query(
        `INSERT INTO surveys (id, team_id, ${WRITTEN.join(', ')}, created_by) VALUES ($1, $2, ${WRITTEN.map((_, i) => `$${i + 3}`).join(', ')}, $${WRITTEN.length + 3})`,
        [id, teamId, ...valuesOf(record), createdBy],
      ),
    );
    return (await this.get(teamId, id))!;
  }

  /** Writes the whole record: the service merged the changes into the stored survey. */
  async update(teamId: number, id: string, record: SurveyRecord): Promise<SurveyRow | null> {
    const result = await uniqueName(record.name, () =>
      this.pool.query(`UPDATE surveys SET ${WRITTEN.map((column, i) => `${column} = $${i + 3}`).join(', ')} WHERE team_id = $1 AND id = $2`, [teamId, id, ...valuesOf(record)]),
    );
    return result.rowCount === 1 ? this.get(teamId, id) : null;
  }
}
