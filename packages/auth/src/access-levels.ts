export const ACCESS_LEVELS = ['none', 'viewer', 'editor'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

const RANK: Record<AccessLevel, number> = { none: 0, viewer: 1, editor: 2 };

export const atLeast = (level: AccessLevel, required: AccessLevel): boolean => RANK[level] >= RANK[required];

export interface AccessInputs {
  isProjectAdmin: boolean;
  isCreator: boolean;
  /** The entry naming this member, if any. */
  memberEntry: AccessLevel | null;
  /** The resource's default entry, if any. */
  defaultEntry: AccessLevel | null;
  /** The most a member without an entry of their own gets (a dashboard restricted to collaborators: viewer). */
  othersAtMost: AccessLevel;
}

/**
 * A member's access to one resource. Admins and the creator can always edit, so nobody can lock
 * a resource away from the people responsible for it; an entry for the member beats the default.
 */
export function resolveAccessLevel(inputs: AccessInputs): AccessLevel {
  if (inputs.isProjectAdmin || inputs.isCreator) return 'editor';
  if (inputs.memberEntry) return inputs.memberEntry;
  const level = inputs.defaultEntry ?? 'editor';
  return atLeast(inputs.othersAtMost, level) ? level : inputs.othersAtMost;
}

/**
 * PostHog's CanEditInsight: an insight on no dashboard is the project's to edit; one on dashboards
 * may be edited by whoever may edit at least one of them, and only viewed by everyone else in the
 * project (its own read is not hidden by a dashboard the caller cannot see).
 */
export function insightAccessLevel(dashboardLevels: readonly AccessLevel[]): AccessLevel {
  return dashboardLevels.length === 0 || dashboardLevels.includes('editor') ? 'editor' : 'viewer';
}
