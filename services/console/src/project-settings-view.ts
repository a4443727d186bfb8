/**
 * The Project settings page's rules, kept pure: the form's fields checked with the bounds
 * `PATCH /api/projects/:id/` sets (the API checks again, and its 400 is shown as it states it),
 * and how a retention reads on screen.
 */
import type { Project } from './api-client.js';

export const MAX_RETENTION_DAYS = 36_500;

export interface SettingsDraft {
  name: string;
  timezone: string;
  keepForever: boolean;
  /** As typed; read only when `keepForever` is off. */
  retentionDays: string;
}

export const draftOf = (project: Project): SettingsDraft => ({
  name: project.name,
  timezone: project.timezone,
  keepForever: project.event_retention_days === null,
  retentionDays: project.event_retention_days === null ? '' : String(project.event_retention_days),
});

/** Each field's problem by its name; empty when the draft can be sent. Whether a timezone exists is the API's to say. */
export function settingsErrors(draft: SettingsDraft): Record<string, string> {
  const errors: Record<string, string> = {};
  const name = draft.name.trim();
  if (!name) errors.name = 'Name is required.';
  else if (name.length > 200) errors.name = 'Name must be at most 200 characters.';
  const timezone = draft.timezone.trim();
  if (!timezone) errors.timezone = 'Timezone is required.';
  else if (timezone.length > 64) errors.timezone = 'Timezone must be at most 64 characters.';
  if (!draft.keepForever) {
    const days = draft.retentionDays.trim();
    if (!/^\d+$/.test(days) || Number(days) < 1 || Number(days) > MAX_RETENTION_DAYS) {
      errors.retention_days = `Days must be a whole number from 1 to ${MAX_RETENTION_DAYS}.`;
    }
  }
  return errors;
}

/** The PATCH body for a valid draft: null retention keeps events forever. */
export function patchBody(draft: SettingsDraft) {
  return {
    name: draft.name.trim(),
    timezone: draft.timezone.trim(),
    event_retention_days: draft.keepForever ? null : Number(draft.retentionDays.trim()),
  };
}

export const retentionText = (days: number | null): string => (days === null ? 'Kept forever' : `${days} ${days === 1 ? 'day' : 'days'}`);
