const NAME_PROPERTIES = ['email', 'name', 'username'] as const;

/** What the UI calls a person: its email, name or username property, else its first distinct id. */
export function personDisplayName(properties: Record<string, unknown> | null, distinctIds: readonly string[]): string {
  for (const key of NAME_PROPERTIES) {
    const value = properties?.[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return distinctIds[0] ?? '';
}
