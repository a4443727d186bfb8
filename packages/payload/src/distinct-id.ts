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
    const cut = [...text].slice(0, MAX_DISTINCT_ID_LENGTH).join('');
    return cut.trim() === '' ? null : cut;
  }
  return null;
}
