import { randomUUID } from 'node:crypto';
import type { FeatureFlagRecord, FeatureFlagStore } from '@tributary/control-plane';
import { badRequest, notFound } from '@tributary/http';
import { checkTargetingFilters, internalTargetingFilters, isRunning, isSurveyFlag, surveyFlagKey } from './survey-flags.js';
import type { CreateSurveyBody, PatchSurveyBody, SurveyFlagChanges } from './survey-requests.js';
import { DuplicateSurveyNameError, type SurveyRecord, type SurveyRow, type SurveyStore } from './survey-store.js';

export interface SurveyServiceDeps {
  surveys: SurveyStore;
  flags: Pick<FeatureFlagStore, 'get' | 'create' | 'update' | 'softDelete'>;
}

const recordOf = (row: SurveyRow): SurveyRecord => ({
  name: row.name,
  description: row.description,
  type: row.type,
  questions: row.questions,
  appearance: row.appearance,
  conditions: row.conditions,
  linked_flag_id: row.linked_flag?.id ?? null,
  targeting_flag_id: row.targeting_flag?.id ?? null,
  internal_targeting_flag_id: row.internal_targeting_flag?.id ?? null,
  start_date: row.start_date?.toISOString() ?? null,
  end_date: row.end_date?.toISOString() ?? null,
  archived: row.archived,
  responses_limit: row.responses_limit,
  schedule: row.schedule,
  enable_partial_responses: row.enable_partial_responses,
});

/**
 * Surveys and the flags they show through, kept in step as PostHog keeps them: the targeting
 * flag (from `targeting_flag_filters`) and the internal one (not yet answered or dismissed) are
 * active exactly while the survey runs, so decide answers what posthog-js asks before showing it.
 */
export class SurveyService {
  constructor(private readonly deps: SurveyServiceDeps) {}

  async create(teamId: number, body: CreateSurveyBody, userId: number): Promise<SurveyRow> {
    const { targeting_flag_filters: filters, remove_targeting_flag: _, targeting_flag_id = null, ...fields } = body;
    const record: SurveyRecord = { ...fields, targeting_flag_id, internal_targeting_flag_id: null };
    await this.check(teamId, record, filters);
    const id = randomUUID();
    const made: FeatureFlagRecord[] = [];
    try {
      if (filters) {
        made.push(await this.newFlag(teamId, record, filters, '', userId));
        record.targeting_flag_id = made[0]!.id;
      }
      const internal = await this.newFlag(teamId, record, internalTargetingFilters(id, record.conditions), '-custom', userId);
      made.push(internal);
      record.internal_targeting_flag_id = internal.id;
      return await this.deps.surveys.create(teamId, id, record, userId);
    } catch (error) {
      await this.dropFlags(teamId, made);
      throw nameError(error);
    }
  }

  async update(teamId: number, id: string, body: PatchSurveyBody, userId: number): Promise<SurveyRow> {
    const row = await this.deps.surveys.get(teamId, id);
    if (!row) throw notFound(`Survey ${id} does not exist.`);
    const { targeting_flag_filters: filters, remove_targeting_flag: remove, ...changes } = body;
    const record: SurveyRecord = { ...recordOf(row), ...changes, ...(remove && { targeting_flag_id: null }) };
    await this.check(teamId, record, filters);
    const kept = row.targeting_flag?.id === record.targeting_flag_id ? row.targeting_flag : null;
    const owned = kept && isSurveyFlag(kept.key) ? kept : null;
    // New filters go to the survey's own flag; a flag the user chose is unlinked, never changed.
    const made = filters && !owned ? await this.newFlag(teamId, record, filters, '', userId) : null;
    if (made) record.targeting_flag_id = made.id;
    const internal = row.internal_targeting_flag ?? (await this.newFlag(teamId, record, internalTargetingFilters(id, record.conditions), '-custom', userId));
    record.internal_targeting_flag_id = internal.id;
    let updated: SurveyRow | null;
    try {
      updated = await this.deps.surveys.update(teamId, id, record);
    } catch (error) {
      await this.dropFlags(teamId, [made, row.internal_targeting_flag ? null : internal]);
      throw nameError(error);
    }
    if (!updated) throw notFound(`Survey ${id} does not exist.`);
    const previous = row.targeting_flag;
    if (previous && isSurveyFlag(previous.key) && previous.id !== record.targeting_flag_id) await this.deps.flags.softDelete(teamId, previous.id);
    const active = isRunning(record);
    if (owned) await this.deps.flags.update(teamId, owned.id, { active, ...(filters && { filters: { ...owned.filters, ...filters } }) });
    await this.deps.flags.update(teamId, internal.id, { filters: internalTargetingFilters(id, record.conditions), active });
    return (await this.deps.surveys.get(teamId, id))!;
  }

  /** The survey and the flags it made; a targeting flag the user chose is left as it is. */
  async delete(teamId: number, id: string): Promise<void> {
    const row = await this.deps.surveys.get(teamId, id);
    if (!row || !(await this.deps.surveys.delete(teamId, id))) throw notFound(`Survey ${id} does not exist.`);
    await this.dropFlags(teamId, [row.targeting_flag, row.internal_targeting_flag].filter((flag) => flag && isSurveyFlag(flag.key)));
  }

  /** The rules PostHog checks beyond the request's shape, each a 400 naming its field. */
  private async check(teamId: number, record: SurveyRecord, filters: SurveyFlagChanges['targeting_flag_filters']): Promise<void> {
    const linked = record.linked_flag_id === null ? null : await this.deps.flags.get(teamId, record.linked_flag_id);
    if (record.linked_flag_id !== null && !linked) throw badRequest(`Feature flag ${record.linked_flag_id} does not exist in this project.`, 'linked_flag_id');
    const variant = record.conditions?.linkedFlagVariant;
    if (variant && variant !== 'any') {
      if (!linked) throw badRequest('conditions.linkedFlagVariant needs a linked_flag_id.', 'conditions.linkedFlagVariant');
      const variants = ((linked.filters.multivariate as { variants?: { key: string }[] } | undefined)?.variants ?? []).map((v) => v.key);
      if (!variants.includes(variant)) throw badRequest(`conditions.linkedFlagVariant "${variant}" is not a variant of flag ${linked.key}.`, 'conditions.linkedFlagVariant');
    }
    if (record.targeting_flag_id !== null && !filters && !(await this.deps.flags.get(teamId, record.targeting_flag_id))) {
      throw badRequest(`Feature flag ${record.targeting_flag_id} does not exist in this project.`, 'targeting_flag_id');
    }
    if (filters) checkTargetingFilters(filters);
  }

  private newFlag(teamId: number, record: SurveyRecord, filters: Record<string, unknown>, suffix: string, userId: number): Promise<FeatureFlagRecord> {
    return this.deps.flags.create(teamId, { key: surveyFlagKey(suffix), name: `Targeting flag for survey ${record.name}`, filters, active: isRunning(record), ensure_experience_continuity: false }, userId);
  }

  private async dropFlags(teamId: number, flags: ({ id: number } | null)[]): Promise<void> {
    for (const flag of flags) if (flag) await this.deps.flags.softDelete(teamId, flag.id);
  }
}

const nameError = (error: unknown) => (error instanceof DuplicateSurveyNameError ? badRequest(error.message, 'name', 'unique') : error);
