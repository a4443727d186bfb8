import { forbidden, unauthorized } from '@tributary/http';
import { PERSONAL_API_KEY_PREFIX, PROJECT_API_KEY_PREFIX } from './keys.js';
import { missingScopes, type Scope } from './scopes.js';

/** What a personal API key grants, as the control plane stores it. */
export interface PersonalApiKeyGrant {
  user_id: number;
  scopes: readonly string[];
  /** The projects the key is limited to; null for every project its user can reach. */
  scoped_projects: readonly number[] | null;
}

/**
 * The live personal API key that `Authorization: Bearer <key>` carries, the one credential of
 * the management API and of local evaluation; 401 without one. Keys without the `phx_` prefix
 * are not looked up: no stored key lacks it.
 */
export async function personalApiKeyOf<Key extends PersonalApiKeyGrant>(
  authorization: string | undefined,
  keys: { findPersonalApiKey(value: string): Promise<Key | null> },
): Promise<Key> {
  const match = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  if (!match) throw unauthorized('Authentication credentials were not provided: send a personal API key as "Authorization: Bearer <key>".', 'not_authenticated');
  const value = match[1]!;
  if (value.startsWith(PROJECT_API_KEY_PREFIX)) {
    throw unauthorized('This is a project API key, which only works for capture and decide; this endpoint expects a personal API key (phx_...).');
  }
  const key = value.startsWith(PERSONAL_API_KEY_PREFIX) ? await keys.findPersonalApiKey(value) : null;
  if (!key) throw unauthorized('Personal API key is invalid or has been deleted.');
  return key;
}

/** 403 naming every scope of `required` that the key lacks. */
export function requireKeyScopes(key: PersonalApiKeyGrant, required: readonly Scope[]): void {
  const missing = missingScopes(key.scopes, required);
  if (missing.length > 0) {
    throw forbidden(`This action requires the scope${missing.length > 1 ? 's' : ''} ${missing.map((s) => `'${s}'`).join(', ')}, which this personal API key does not have.`, 'missing_scope');
  }
}

/** 403 when the key's user is not in the project's organization, or the key is limited to other projects. */
export async function requireProjectAccess(
  key: PersonalApiKeyGrant,
  projectId: number,
  projects: { projectsForUser(userId: number): Promise<readonly { id: number }[]> },
): Promise<void> {
  const reachable = (await projects.projectsForUser(key.user_id)).some((p) => p.id === projectId);
  const allowedByKey = key.scoped_projects === null || key.scoped_projects.includes(projectId);
  if (!reachable || !allowedByKey) throw forbidden(`This personal API key cannot access project ${projectId}.`, 'project_forbidden');
}
