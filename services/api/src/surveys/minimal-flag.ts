import type { FeatureFlagRecord } from '@tributary/control-plane';

/** A linked flag as PostHog's MinimalFeatureFlagSerializer nests it in surveys and early access features. */
export type MinimalFlag = Pick<FeatureFlagRecord, 'id' | 'team_id' | 'key' | 'name' | 'filters' | 'active' | 'deleted' | 'ensure_experience_continuity' | 'version'>;

/** SQL for the live flag of id `column` as a JSON object of MinimalFlag's fields, or null. */
export const minimalFlagJson = (column: string) =>
  `(SELECT json_build_object('id', f.id, 'team_id', f.team_id, 'key', f.key, 'name', f.name, 'filters', f.filters, 'active', f.active,
     'deleted', f.deleted, 'ensure_experience_continuity', f.ensure_experience_continuity, 'version', f.version)
   FROM feature_flags f WHERE f.id = ${column} AND NOT f.deleted)`;
