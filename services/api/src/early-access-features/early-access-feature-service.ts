import { randomUUID } from 'node:crypto';
import { DuplicateFlagKeyError, type FeatureFlagRecord, type FeatureFlagStore } from '@tributary/control-plane';
import { badRequest, notFound } from '@tributary/http';
import type { EarlyAccessFeatureFields, EarlyAccessFeatureRow, EarlyAccessFeatureStore, Stage } from './early-access-feature-store.js';

export interface EarlyAccessFeatureServiceDeps {
  features: EarlyAccessFeatureStore;
  flags: Pick<FeatureFlagStore, 'get' | 'create' | 'update' | 'softDelete'>;
}

/** PostHog's release stages: a feature in one is open to enrollment; draft and archived ones are not. */
const RELEASE_STAGES: readonly Stage[] = ['concept', 'alpha', 'beta', 'general-availability'];
const isRelease = (stage: Stage) => RELEASE_STAGES.includes(stage);

/**
 * PostHog's super condition: posthog-js sets `$feature_enrollment/<key>` on the person who opts
 * in, and a matching super condition decides the flag before its other conditions.
 */
export const enrollmentSuperGroups = (key: string) => [
  { properties: [{ key: `$feature_enrollment/${key}`, type: 'person', operator: 'exact', value: ['true'] }], rollout_percentage: 100 },
];

/** As Django's slugify, with which PostHog keys a feature's new flag. */
export const slugify = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');

function withEnrollment(filters: Record<string, unknown>, key: string, enrolled: boolean): Record<string, unknown> {
  const { super_groups: _, ...rest } = filters;
  return enrolled ? { ...rest, super_groups: enrollmentSuperGroups(key) } : rest;
}

/** Early access features and the flag each shows through, its enrollment condition kept in step with the stage. */
export class EarlyAccessFeatureService {
  constructor(private readonly deps: EarlyAccessFeatureServiceDeps) {}

  async create(teamId: number, fields: EarlyAccessFeatureFields, flagId: number | undefined, userId: number): Promise<EarlyAccessFeatureRow> {
    const flag = flagId === undefined ? await this.newFlag(teamId, fields, userId) : await this.existingFlag(teamId, flagId, fields.stage);
    try {
      return await this.deps.features.create(teamId, randomUUID(), fields, flag.id);
    } catch (error) {
      if (flagId === undefined) await this.deps.flags.softDelete(teamId, flag.id);
      if ((error as { code?: string }).code === '23505') throw badRequest(`Feature flag ${flag.key} already has a feature attached to it.`, 'feature_flag_id');
      throw error;
    }
  }

  async update(teamId: number, id: string, changes: Partial<EarlyAccessFeatureFields>): Promise<EarlyAccessFeatureRow> {
    const row = await this.deps.features.get(teamId, id);
    if (!row) throw notFound(`Early access feature ${id} does not exist.`);
    const flag = row.feature_flag;
    // PostHog's transitions: into a release stage adds the condition, into any other removes it.
    const flagChanges = changes.stage !== undefined && (isRelease(changes.stage) ? !isRelease(row.stage) : true);
    if (flag && flagChanges) await this.deps.flags.update(teamId, flag.id, { filters: withEnrollment(flag.filters, flag.key, isRelease(changes.stage!)) });
    return (await this.deps.features.update(teamId, id, changes))!;
  }

  /** The feature goes; its flag stays, without the enrollment condition. */
  async delete(teamId: number, id: string): Promise<void> {
    const row = await this.deps.features.get(teamId, id);
    if (!row || !(await this.deps.features.delete(teamId, id))) throw notFound(`Early access feature ${id} does not exist.`);
    if (row.feature_flag) await this.deps.flags.update(teamId, row.feature_flag.id, { filters: withEnrollment(row.feature_flag.filters, row.feature_flag.key, false) });
  }

  private async newFlag(teamId: number, fields: EarlyAccessFeatureFields, userId: number): Promise<FeatureFlagRecord> {
    const key = slugify(fields.name);
    if (!key) throw badRequest('name must hold a letter or digit: the feature flag is keyed by it.', 'name');
    const filters = withEnrollment({ groups: [{ properties: [], rollout_percentage: 0, variant: null }] }, key, isRelease(fields.stage));
    try {
      return await this.deps.flags.create(teamId, { key, name: `Feature Flag for Feature ${fields.name}`, filters, active: true, ensure_experience_continuity: false }, userId);
    } catch (error) {
      if (error instanceof DuplicateFlagKeyError) throw badRequest(`${error.message} Name the feature differently, or pass that flag as feature_flag_id.`, 'name', 'unique');
      throw error;
    }
  }

  /** PostHog's checks on a flag given to a feature: one feature per flag, for persons, with no variants. */
  private async existingFlag(teamId: number, flagId: number, stage: Stage): Promise<FeatureFlagRecord> {
    const flag = await this.deps.flags.get(teamId, flagId);
    if (!flag) throw badRequest(`Feature flag ${flagId} does not exist in this project.`, 'feature_flag_id');
    if (await this.deps.features.flagTaken(flagId)) throw badRequest(`Feature flag ${flag.key} already has a feature attached to it.`, 'feature_flag_id');
    if (flag.filters.aggregation_group_type_index != null) throw badRequest('Group-based feature flags are not supported for early access features.', 'feature_flag_id');
    if (((flag.filters.multivariate as { variants?: unknown[] } | null | undefined)?.variants ?? []).length > 0) {
      throw badRequest('Multivariate feature flags are not supported for early access features.', 'feature_flag_id');
    }
    if (!isRelease(stage)) return flag;
    return (await this.deps.flags.update(teamId, flag.id, { filters: withEnrollment(flag.filters, flag.key, true) }))!;
  }
}
