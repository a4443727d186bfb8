const CASE_INSENSITIVE = new Set(['anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false']);
const CASE_SENSITIVE = new Set(['[object Object]', 'NaN', 'None', 'none', 'null', '0']);

/**
 * Ids that SDK bugs send for many different people; merging on them would join strangers into
 * one person, so they never take part in an identity merge.
 */
export function isIllegalDistinctId(id: string): boolean {
  const trimmed = id.trim();
  if (trimmed === '') return true;
  if (CASE_INSENSITIVE.has(trimmed.toLowerCase())) return true;
  const unquoted = /^(['"])(.*)\1$/.exec(trimmed)?.[2] ?? trimmed;
  return CASE_SENSITIVE.has(trimmed) || CASE_SENSITIVE.has(unquoted) || CASE_INSENSITIVE.has(unquoted.toLowerCase());
}
