/** The weekly event-deletion batch: Sundays at 05:00 UTC, as the spec says. */
export const DELETION_SCHEDULE = { id: 'weekly-event-deletion', pattern: '0 5 * * 0', tz: 'UTC' } as const;
export const DELETION_QUEUE = 'event-deletions';
export const DELETION_JOB = 'event-deletion-batch';

/** The first Sunday 05:00 UTC strictly after `now`. */
export function nextDeletionRun(now: Date): Date {
  const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 5, 0, 0, 0));
  next.setUTCDate(next.getUTCDate() + ((7 - next.getUTCDay()) % 7));
  if (next.getTime() <= now.getTime()) next.setUTCDate(next.getUTCDate() + 7);
  return next;
}

/** The daily event-retention job: 04:00 UTC, an hour before the weekly deletion batch would start. */
export const RETENTION_SCHEDULE = { id: 'daily-event-retention', pattern: '0 4 * * *', tz: 'UTC' } as const;
export const RETENTION_QUEUE = 'event-retention';
export const RETENTION_JOB = 'event-retention';
