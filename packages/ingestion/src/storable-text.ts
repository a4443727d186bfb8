/**
 * Text every store takes. ClickHouse refuses a lone UTF-16 surrogate in JSON input ("missing
 * second part of surrogate pair") and Postgres refuses U+0000 in text and jsonb; either would fail
 * a whole chunk on every retry and stall its partition. Both become U+FFFD, as PostHog does for
 * Postgres, so an event carrying them is stored rather than blocking the events after it.
 */
const EVERY_UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** How JSON text spells them: `\u0000` and any surrogate escape (a paired one only costs the slow path). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** No U+0000 and no lone surrogate, as nearly every text: two native scans, several times faster than the regular expression. */
const isStorable = (text: string) => text.indexOf('\0') === -1 && text.isWellFormed();

export function storableText(text: string): string {
  return isStorable(text) ? text : text.replace(EVERY_UNSTORABLE, '\ufffd');
}

function storable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.some((key) => storableText(key) !== key)) return value;
  return Object.fromEntries(keys.map((key) => [storableText(key), (value as Record<string, unknown>)[key]]));
}

/**
 * `JSON.parse`, with every string and key made storable. Nearly every event has nothing to
 * replace, so the text is checked first and only the rare one pays for the reviver.
 */
export function parseStorableJson(text: string): unknown {
  if (isStorable(text) && (text.indexOf('\\u') === -1 || !UNSTORABLE_ESCAPE.test(text))) return JSON.parse(text);
  return JSON.parse(text, storable);
}
