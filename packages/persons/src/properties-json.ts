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
