import { notFound } from '@tributary/http';

/** A UUID in any case, for JSON schemas; Postgres would answer anything else with an error, not a miss. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

const uuid = new RegExp(UUID_PATTERN);
export const isUuid = (value: string): boolean => uuid.test(value);

/** A path parameter that names a row by uuid: anything else names no row, so it is a 404 for `what`. */
export function uuidParam(raw: unknown, what: string): string {
  if (!isUuid(String(raw))) throw notFound(`${what} ${String(raw)} does not exist.`);
  return String(raw);
}
