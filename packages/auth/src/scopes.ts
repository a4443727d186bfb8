/** Scopes a personal API key can hold. `*` holds every scope. */
export const SCOPES = [
  'query:read',
  'person:read',
  'person:write',
  'cohort:read',
  'cohort:write',
  'action:read',
  'action:write',
  'activity_log:read',
  'feature_flag:read',
  'feature_flag:write',
  'dashboard:read',
  'dashboard:write',
  'insight:read',
  'insight:write',
  'batch_export:read',
  'batch_export:write',
  'organization_member:read',
  'organization_member:write',
  'project:read',
  'project:write',
  'personal_api_key:read',
  'personal_api_key:write',
  'survey:read',
  'survey:write',
  'early_access_feature:read',
  'early_access_feature:write',
  'group:read',
  'group:write',
  'annotation:read',
  'annotation:write',
  'event_definition:read',
  'event_definition:write',
  'property_definition:read',
  'property_definition:write',
  'experiment:read',
  'experiment:write',
] as const;

export type Scope = (typeof SCOPES)[number];
export type GrantedScope = Scope | '*';

export function isGrantedScope(value: string): value is GrantedScope {
  return value === '*' || (SCOPES as readonly string[]).includes(value);
}

/**
 * A `:write` scope implies its `:read`, as in PostHog. Returns the scopes in `required` that
 * `granted` does not cover, so the caller can name them in a 403.
 */
export function missingScopes(granted: readonly string[], required: readonly Scope[]): Scope[] {
  if (granted.includes('*')) return [];
  return required.filter((scope) => {
    if (granted.includes(scope)) return false;
    const [object, action] = scope.split(':');
    return !(action === 'read' && granted.includes(`${object}:write`));
  });
}
