import type { Request } from 'express';
import type { FeatureFlagStore } from '@tributary/control-plane';
import { badRequest, forbidden } from '@tributary/http';
import type { AccessControls } from '../access-controls/access-controls.js';
import { projectOf } from '../auth/authenticate.js';

export interface LinkOptions {
  /** The body field that named the flag: a flag the caller may not see answers as a missing one there. */
  attr?: string;
  /** The object reaching it made the flag (a survey's own targeting flag): its scope covers the flag, the access control still applies. */
  madeByParent?: boolean;
}

/**
 * A flag reached through another object, an early access feature's or a survey's: the route asks
 * the flag's own scope (`feature_flag:read` to see it, `:write` to change it) and access control
 * too, so nothing reaches a flag by a path its own routes would refuse.
 */
export class LinkedFlags {
  constructor(private readonly deps: { access: AccessControls; flags: Pick<FeatureFlagStore, 'get'> }) {}

  /** Refuses unless the caller may read (viewer) or change (editor) the live flag `id`; a missing flag is left to the caller's own check. */
  async require(req: Request, id: number, needed: 'viewer' | 'editor', options: LinkOptions = {}): Promise<void> {
    const flag = await this.deps.flags.get(projectOf(req).id, id);
    if (!flag) return;
    await this.deps.access.require(req, 'feature_flag', flag, needed, 'Feature flag', {
      coveredByParent: options.madeByParent,
      hidden: () => (options.attr ? badRequest(`Feature flag ${id} does not exist in this project.`, options.attr) : forbidden(`Feature flag ${id} is not yours to change.`, 'access_level')),
    });
  }

  /** The nested flag as the caller may see it: null unless they may read it. */
  async visible<F extends { id: number }>(req: Request, flag: F | null, options: LinkOptions = {}): Promise<F | null> {
    if (!flag) return null;
    const record = await this.deps.flags.get(projectOf(req).id, flag.id);
    if (!record) return null;
    const { verdict } = await this.deps.access.verdict(req, 'feature_flag', record, 'viewer', options.madeByParent);
    return verdict.allowed ? flag : null;
  }
}
