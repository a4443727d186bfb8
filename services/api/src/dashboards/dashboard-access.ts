import type { ProtectedResource } from '../access-controls/access-controls.js';
import { RESTRICTION_LEVEL } from './dashboard-requests.js';
import type { DashboardRow } from './dashboard-store.js';

/** Restricting a dashboard to collaborators leaves everyone without an entry of their own a viewer. */
export const asProtected = (row: Pick<DashboardRow, 'id' | 'created_by' | 'restriction_level'>): ProtectedResource => ({
  id: row.id,
  created_by: row.created_by,
  othersAtMost: row.restriction_level === RESTRICTION_LEVEL.onlyCollaboratorsCanEdit ? 'viewer' : 'editor',
});
