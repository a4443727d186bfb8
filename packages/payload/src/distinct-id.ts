export const MAX_DISTINCT_ID_LENGTH = 200;

/**
 * The distinct id of a raw event: `distinct_id`, else `$distinct_id`, else
 * `properties.distinct_id`; numbers become decimal strings; cut to 200 characters.
 * `null` when there is none, or it is empty: such events are dropped, not rejected.
 */
export function extractDistinctId(event: Record<string, unknown>): string | null {
  const properties = event.properties as Record<string, unknown> | undefined;
  const candidates = [event.distinct_id, event.$distinct_id, properties?.distinct_id];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === null) continue;
    let text: string;
    if (typeof candidate === 'string') text = candidate;
    else if (typeof candidate === 'number' && Number.isFinite(candidate)) text = String(candidate);
    else if (typeof candidate === 'boolean' || typeof candidate === 'bigint') text = String(candidate);
    else text = JSON.stringify(candidate);
    // Cut by code points, not UTF-16 units, so a surrogate pair is never split; a string of at
    // most 200 units has at most 200 code points, so short ids skip the copy.
    const cut = text.length <= MAX_DISTINCT_ID_LENGTH ? text : [...text].slice(0, MAX_DISTINCT_ID_LENGTH).join('');
    return cut.trim() === '' ? null : cut;
  }
  return null;
}
