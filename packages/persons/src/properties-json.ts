const texts = new WeakMap<object, string>();

/**
 * A person's properties as JSON text, computed once per state. Ingest writes each state it
 * reaches to Postgres, to ClickHouse's person table, to decide's cache and into every event row
 * that records it; property objects are never changed in place (an update makes a new one), so
 * the text of an object stays right for as long as the object lives.
 */
export function propertiesJson(properties: object): string {
  let text = texts.get(properties);
  if (text === undefined) {
    text = JSON.stringify(properties);
    texts.set(properties, text);
  }
  return text;
}

/**
 * Properties read as text from a jsonb column, with that text kept as their JSON: a chunk's
 * persons are read afresh each time, and one its events leave unchanged is then written out
 * (into their rows, to ClickHouse's person table, to decide's cache) without being stringified
 * again. Postgres writes jsonb with a space after each colon and comma and escapes every control
 * character, so the text holds no raw tab or newline, as JSON.stringify's would not.
 */
export function parsePropertiesJson(text: string): Record<string, unknown> {
  const properties = JSON.parse(text) as Record<string, unknown>;
  texts.set(properties, text);
  return properties;
}
