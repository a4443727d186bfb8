/** A UUID in any case, for JSON schemas; Postgres would answer anything else with an error, not a miss. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const uuid = new RegExp(UUID_PATTERN);
export const isUuid = (value: string): boolean => uuid.test(value);
