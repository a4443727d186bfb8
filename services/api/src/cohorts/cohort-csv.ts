import { parse } from 'csv-parse/sync';
import { badRequest } from '@tributary/http';

/** What a static cohort's CSV names its persons by. */
export type CsvIdKind = 'person_id' | 'distinct_id' | 'email';

// PostHog's recognised headers (case ignored); `Person .id` is the column of its own persons export.
const HEADERS: readonly [CsvIdKind, readonly string[]][] = [
  ['person_id', ['person_id', 'person-id', 'person .id']],
  ['distinct_id', ['distinct_id', 'distinct-id']],
  ['email', ['email', 'e-mail']],
];

const kindOf = (header: string): CsvIdKind | undefined => HEADERS.find(([, names]) => names.includes(header.trim().toLowerCase()))?.[0];

/** Values no person can have (Postgres stores no U+0000), left out rather than sent to the database. */
const usable = (value: string) => value !== '' && !value.includes('\u0000');

/**
 * The persons a CSV names, read as PostHog reads an uploaded cohort: one column is a list of
 * distinct ids, unless its header says person ids (uuids) or emails; with several columns, the
 * one whose header is a person id, else a distinct id, else an email.
 */
export function readCohortCsv(file: Buffer): { kind: CsvIdKind; ids: string[] } {
  let rows: string[][];
  try {
    rows = parse(file, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, trim: true });
  } catch (error) {
    throw badRequest(`csv: the file is not readable as CSV (${(error as Error).message.split('\n')[0]}).`, 'csv');
  }
  const nonBlank = rows.filter((row) => row.some((cell) => cell !== ''));
  const [first, ...rest] = nonBlank;
  if (!first) throw badRequest('CSV file is empty. Please upload a CSV file with at least one row of data.', 'csv');
  let kind: CsvIdKind;
  let column = 0;
  let data = nonBlank;
  if (first.filter((cell) => cell !== '').length <= 1) {
    const headerKind = kindOf(first[0] ?? '');
    kind = headerKind === 'person_id' || headerKind === 'email' ? headerKind : 'distinct_id';
    if (headerKind) data = rest;
  } else {
    const found = HEADERS.map(([k]) => [k, first.findIndex((cell) => kindOf(cell) === k)] as const).find(([, i]) => i >= 0);
    if (!found) {
      throw badRequest(
        `Multi-column CSV must contain a column with a supported ID header: person_id, distinct_id or email. Found columns: ${first.filter(Boolean).join(', ')}`,
        'csv',
      );
    }
    [kind, column] = found;
    data = rest;
  }
  const ids = [...new Set(data.map((row) => row[column] ?? '').filter(usable))];
  if (ids.length === 0) throw badRequest('CSV file contains no valid person IDs, distinct IDs, or email addresses.', 'csv');
  return { kind, ids };
}
