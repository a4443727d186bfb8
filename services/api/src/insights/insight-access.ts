import type { Request } from 'express';
import { insightAccessLevel, type AccessLevel } from '@tributary/auth';
import { badRequest, forbidden } from '@tributary/http';
import type { AccessControls } from '../access-controls/access-controls.js';
import { projectOf } from '../auth/authenticate.js';
import { asProtected } from '../dashboards/dashboard-access.js';
import { RESTRICTION_LEVEL } from '../dashboards/dashboard-requests.js';
import type { DashboardStore } from '../dashboards/dashboard-store.js';
import type { InsightRow } from './insight-store.js';

interface DashboardStanding {
  level: AccessLevel;
  restriction: number;
}

/** What the caller sees of a saved insight: the dashboards they may see, and their own standing on it. */
export interface InsightView {
  row: InsightRow;
  level: AccessLevel;
  /** The highest restriction level of its dashboards, as PostHog's `effective_restriction_level`. */
  restriction: number;
}

const standings = new WeakMap<Request, Map<number, Promise<DashboardStanding | null>>>();

/**
 * Saved insights under their dashboards' restrictions, as PostHog's CanEditInsight: editing an
 * insight needs edit access to one of its dashboards (or it being on none), placing it on a
 * dashboard or taking it off one needs edit access to that dashboard, and a read leaves out the
 * dashboards the caller may not see. The insight's own scope covers its tiles, as in PostHog.
 */
export class InsightAccess {
  constructor(private readonly deps: { access: AccessControls; dashboards: Pick<DashboardStore, 'get'> }) {}

  /** The caller's level on one live dashboard of the project, or null when there is none; looked up once per request. */
  private standing(req: Request, id: number): Promise<DashboardStanding | null> {
    let byId = standings.get(req);
    if (!byId) standings.set(req, (byId = new Map()));
    let found = byId.get(id);
    if (!found) {
      found = this.deps.dashboards.get(projectOf(req).id, id).then(async (row) => row && { level: await this.deps.access.levelOf(req, 'dashboard', asProtected(row)), restriction: row.restriction_level });
      byId.set(id, found);
    }
    return found;
  }

  async view(req: Request, row: InsightRow): Promise<InsightView> {
    const on = (await Promise.all(row.dashboards.map(async (id) => ({ id, standing: await this.standing(req, id) })))).filter((d) => d.standing !== null);
    const visible = new Set(on.filter((d) => d.standing!.level !== 'none').map((d) => d.id));
    return {
      row: { ...row, dashboards: row.dashboards.filter((id) => visible.has(id)), tiles: row.tiles.filter((t) => visible.has(t.dashboard_id)) },
      level: insightAccessLevel(on.map((d) => d.standing!.level)),
      restriction: Math.max(RESTRICTION_LEVEL.everyoneCanEdit, ...on.map((d) => d.standing!.restriction)),
    };
  }

  /** 403 unless the caller may edit the insight (rename, rewrite, delete, move). */
  async requireEdit(req: Request, row: InsightRow): Promise<void> {
    if ((await this.view(req, row)).level !== 'editor') {
      throw forbidden(`Insight ${row.id} is on dashboards you may only view: it can only be edited by their creators, the members they invite to edit, and project admins.`, 'access_level');
    }
  }

  /**
   * The dashboards the insight is to be on when the caller asks for `requested`: each one added or
   * taken off must be one they may edit. Dashboards hidden from them stay as they are, since a
   * caller who cannot see them cannot mean to take the insight off them.
   */
  async placement(req: Request, current: readonly number[], requested: readonly number[]): Promise<number[]> {
    const kept = [];
    for (const id of requested) {
      if (current.includes(id)) continue;
      const standing = await this.standing(req, id);
      if (!standing || standing.level === 'none') throw badRequest(`Dashboard ${id} does not exist.`, 'dashboards');
      if (standing.level !== 'editor') throw forbidden(`You may only view dashboard ${id}, so you cannot add insights to it.`, 'access_level');
    }
    for (const id of current) {
      if (requested.includes(id)) continue;
      const standing = await this.standing(req, id);
      if (standing?.level === 'none') kept.push(id);
      else if (standing && standing.level !== 'editor') throw forbidden(`You may only view dashboard ${id}, so you cannot take insights off it.`, 'access_level');
    }
    return [...new Set([...requested, ...kept])];
  }
}
