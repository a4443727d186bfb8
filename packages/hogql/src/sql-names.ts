/** Identifiers are always backquoted, with `\` and `` ` `` escaped as ClickHouse reads them, so no name is SQL. */
export const quoteIdentifier = (name: string): string => `\`${name.replace(/[\\`]/g, (c) => `\\${c}`)}\``;
