import { DuplicateFlagKeyError, type FeatureFlagRecord, type FeatureFlagStore } from '@tributary/control-plane';
import { MAX_VARIANTS } from '@tributary/experiments';
import { badRequest, notFound } from '@tributary/http';
import type { ExperimentFields, ExperimentParameters, ExperimentRow, ExperimentStore } from './experiment-store.js';

export interface ExperimentServiceDeps {
  experiments: ExperimentStore;
  flags: Pick<FeatureFlagStore, 'getByKey' | 'create' | 'update' | 'softDelete'>;
}

type Variant = NonNullable<ExperimentParameters['feature_flag_variants']>[number];

/** PostHog's default split when the experiment names no variants. */
const DEFAULT_VARIANTS: Variant[] = [
  { key: 'control', name: 'Control Group', rollout_percentage: 50 },
  { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
];

const variantsOf = (flag: FeatureFlagRecord): Variant[] => (flag.filters.multivariate as { variants?: Variant[] } | null | undefined)?.variants ?? [];

/** PostHog's rules on an experiment's variants: 2 to MAX_VARIANTS distinct keys, `control` among them, shares adding up to 100. */
function checkVariants(variants: readonly Variant[], attr: string): void {
  if (variants.length < 2 || variants.length > MAX_VARIANTS) throw badRequest(`An experiment needs 2 to ${MAX_VARIANTS} variants, not ${variants.length}.`, attr);
  if (new Set(variants.map((v) => v.key)).size !== variants.length) throw badRequest('Variant keys must be unique.', attr);
  if (!variants.some((v) => v.key === 'control')) throw badRequest('Feature flag variants must contain a control variant.', attr);
  if (variants.reduce((sum, v) => sum + v.rollout_percentage, 0) !== 100) throw badRequest('The variants\' rollout percentages must add up to 100.', attr);
}

function checkDates(start: string | null | undefined, end: string | null | undefined): void {
  for (const [attr, value] of [['start_date', start], ['end_date', end]] as const) {
    if (typeof value === 'string' && Number.isNaN(Date.parse(value))) throw badRequest(`${attr} must be an ISO 8601 date and time.`, attr);
  }
  if (start && end && Date.parse(end) < Date.parse(start)) throw badRequest('end_date must not be before start_date.', 'end_date');
}

/** Experiments and the multivariate flag each reads: made with the experiment, or a flag of the project's own with the same key. */
export class ExperimentService {
  constructor(private readonly deps: ExperimentServiceDeps) {}

  async create(teamId: number, fields: ExperimentFields, flagKey: string, userId: number): Promise<ExperimentRow> {
    checkDates(fields.start_date, fields.end_date);
    const existing = await this.deps.flags.getByKey(teamId, flagKey);
    const flag = existing ? this.linkable(existing) : await this.newFlag(teamId, fields, flagKey, userId);
    const parameters = { ...fields.parameters, feature_flag_variants: variantsOf(flag) };
    try {
      return await this.deps.experiments.create(teamId, { ...fields, parameters }, flag.id, userId);
    } catch (error) {
      if (!existing) await this.deps.flags.softDelete(teamId, flag.id);
      throw error;
    }
  }

  async update(teamId: number, id: number, changes: Partial<ExperimentFields>): Promise<ExperimentRow> {
    const row = await this.deps.experiments.get(teamId, id);
    if (!row) throw notFound(`Experiment ${id} does not exist.`);
    const variants = changes.parameters?.feature_flag_variants;
    if (variants !== undefined && JSON.stringify(variants) !== JSON.stringify(row.parameters.feature_flag_variants)) {
      throw badRequest("Can't update feature_flag_variants on Experiment: change the feature flag instead.", 'parameters.feature_flag_variants');
    }
    const start = Object.hasOwn(changes, 'start_date') ? changes.start_date : row.start_date?.toISOString();
    const end = Object.hasOwn(changes, 'end_date') ? changes.end_date : row.end_date?.toISOString();
    checkDates(start, end);
    // Launching turns the flag on, as PostHog's launch does.
    if (!row.start_date && changes.start_date && row.feature_flag && !row.feature_flag.active) await this.deps.flags.update(teamId, row.feature_flag_id, { active: true });
    const parameters = changes.parameters && { ...changes.parameters, feature_flag_variants: row.parameters.feature_flag_variants };
    return (await this.deps.experiments.update(teamId, id, { ...changes, ...(parameters && { parameters }) }))!;
  }

  /** The experiment goes; its flag stays, as PostHog's. */
  async delete(teamId: number, id: number): Promise<void> {
    if (!(await this.deps.experiments.softDelete(teamId, id))) throw notFound(`Experiment ${id} does not exist.`);
  }

  /** A project's flag an experiment may read: multivariate, for persons, with a control variant. */
  private linkable(flag: FeatureFlagRecord): FeatureFlagRecord {
    if (flag.filters.aggregation_group_type_index != null) throw badRequest('Group-based feature flags are not supported for experiments here.', 'feature_flag_key');
    const variants = variantsOf(flag);
    if (variants.length === 0) throw badRequest(`Feature flag ${flag.key} is not multivariate: an experiment needs a flag with variants.`, 'feature_flag_key');
    checkVariants(variants, 'feature_flag_key');
    return flag;
  }

  private async newFlag(teamId: number, fields: ExperimentFields, key: string, userId: number): Promise<FeatureFlagRecord> {
    const variants = fields.parameters.feature_flag_variants ?? DEFAULT_VARIANTS;
    checkVariants(variants, 'parameters.feature_flag_variants');
    const filters = { groups: [{ properties: [], rollout_percentage: 100, variant: null }], multivariate: { variants }, aggregation_group_type_index: null, payloads: {} };
    try {
      return await this.deps.flags.create(teamId, { key, name: `Feature Flag for Experiment ${fields.name}`, filters, active: fields.start_date != null, ensure_experience_continuity: false }, userId);
    } catch (error) {
      if (error instanceof DuplicateFlagKeyError) throw badRequest(error.message, 'feature_flag_key', 'unique');
      throw error;
    }
  }
}
