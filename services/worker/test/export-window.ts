/** A window in the past the export tests' rows are stored in. */
export const WINDOW = { start: new Date('2024-03-01T10:00:00Z'), end: new Date('2024-03-01T11:00:00Z') };
