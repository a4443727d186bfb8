import { atLeast, type AccessLevel } from './access-levels.js';
import { missingScopes, type Scope } from './scopes.js';

/** The kinds of object a scope names: `feature_flag` of `feature_flag:read`. */
export type ScopeObject = Scope extends `${infer O}:${string}` ? O : never;

export type Need = 'read' | 'write';

/**
 * What one request may do with one object. `hidden` is answered as if the object did not exist,
 * so a member cannot learn what an access control keeps from them.
 */
export type Verdict =
  | { allowed: true }
  | { allowed: false; reason: 'missing_scope'; scopes: Scope[] }
  | { allowed: false; reason: 'hidden' }
  | { allowed: false; reason: 'view_only' };

export interface ObjectRequest {
  /** The key's scopes. */
  scopes: readonly string[];
  object: ScopeObject;
  need: Need;
  /** The caller's access level on the object (see resolveAccessLevel). */
  level: AccessLevel;
  /**
   * The scope of the object this one is reached through already covers it (a survey's own
   * targeting flag is part of the survey): only the access control is asked then.
   */
  coveredByParent?: boolean;
}

/**
 * The one rule for reaching an object, directly or through another one: the key must hold the
 * object's scope for the need (`:write` implies `:read`), and the caller's access level must be
 * at least viewer to read and editor to write.
 */
export function decide(request: ObjectRequest): Verdict {
  if (!request.coveredByParent) {
    const missing = missingScopes(request.scopes, [`${request.object}:${request.need}` as Scope]);
    if (missing.length > 0) return { allowed: false, reason: 'missing_scope', scopes: missing };
  }
  if (request.level === 'none') return { allowed: false, reason: 'hidden' };
  if (request.need === 'write' && !atLeast(request.level, 'editor')) return { allowed: false, reason: 'view_only' };
  return { allowed: true };
}

/** Installation-wide figures are for operators, and only through a key that is itself unlimited. */
export function mayReadInstance(key: { scopes: readonly string[]; scoped_projects: readonly number[] | null }, isInstanceOperator: boolean): boolean {
  return isInstanceOperator && key.scopes.includes('*') && key.scoped_projects === null;
}
