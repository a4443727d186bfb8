import { NUMERIC_PATTERN, asText, isNumeric, type StoredPropertyFilter, type ValueOperator } from './property-filter.js';
import { PropertyFilterError } from './property-filter-error.js';
import { parseDateInput } from './relative-date.js';

/** A WHERE fragment with its parameters, numbered from the `firstParam` it was built with. */
export interface PgCondition {
  text: string;
  params: unknown[];
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const COMPARISONS = { gt: '>', gte: '>=', lt: '<', lte: '<=', is_date_before: '<', is_date_after: '>', is_date_exact: '=' } as const;

/**
 * The property as text the way the matcher sees it: a string as it is, any other JSON value as
 * JSON (`->>` would turn a JSON null into SQL NULL, which the matcher reads as "null").
 */
const textOf = (json: string) => `(CASE jsonb_typeof(${json}) WHEN 'string' THEN ${json} #>> '{}' ELSE ${json}::text END)`;

/**
 * The property read as a time, or NULL. Postgres 15 has no non-throwing timestamp cast, so the
 * SQL/JSON `.datetime()` method parses (silently, to NULL), and only its canonical output is cast;
 * a `Z` suffix is spelled as an offset first, since `.datetime()` does not read it.
 */
function timeOf(text: string): string {
  const parsed = `(jsonb_path_query_first(to_jsonb(regexp_replace(${text}, '[Zz]$', '+00:00')), '$.datetime()', '{}', true) #>> '{}')`;
  return `(CASE WHEN ${parsed} !~ '^[0-9]{4}-' THEN NULL WHEN ${parsed} ~ '[+-][0-9]{2}:[0-9]{2}$' THEN ${parsed}::timestamptz ELSE ${parsed}::timestamp AT TIME ZONE 'UTC' END)`;
}

/**
 * One filter on a property of a jsonb column, as a Postgres condition with the in-memory
 * matcher's semantics (see `matchProperty`). `param` adds a parameter and returns its `$n`.
 */
export function postgresPropertyCondition(column: string, filter: StoredPropertyFilter, param: (value: unknown) => string, now: Date): string {
  const key = param(filter.key);
  const json = `(${column} -> ${key})`;
  const text = textOf(json);
  const present = `(${column} ? ${key})`;
  const when = (condition: string) => `(${present} AND ${condition})`;
  const unless = (condition: string) => `(NOT ${present} OR ${condition})`;
  const operator: ValueOperator = (filter.operator ?? 'exact') as ValueOperator;
  switch (operator) {
    case 'exact':
      return when(`lower(${text}) = ANY(${param(asList(filter.value).map((v) => asText(v).toLowerCase()))}::text[])`);
    case 'is_not':
      return unless(`NOT lower(${text}) = ANY(${param(asList(filter.value).map((v) => asText(v).toLowerCase()))}::text[])`);
    case 'icontains':
      return when(`strpos(lower(${text}), ${param(asText(filter.value).toLowerCase())}::text) > 0`);
    case 'not_icontains':
      return unless(`strpos(lower(${text}), ${param(asText(filter.value).toLowerCase())}::text) = 0`);
    case 'regex':
      return when(`${text} ~ ${param(asText(filter.value))}::text`);
    case 'not_regex':
      return unless(`${text} !~ ${param(asText(filter.value))}::text`);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const sign = COMPARISONS[operator];
      // "C" compares code points, as JavaScript does; the database's locale might not.
      const asString = `${text} COLLATE "C" ${sign} ${param(String(filter.value))}::text`;
      if (!isNumeric(filter.value)) return when(asString);
      // CASE, not AND: Postgres may evaluate either side of an AND first, and the cast must only see numbers.
      return when(`(CASE WHEN ${text} ~ '${NUMERIC_PATTERN}' THEN ${text}::numeric ${sign} ${param(String(filter.value))}::numeric ELSE ${asString} END)`);
    }
    case 'is_set':
      return present;
    case 'is_not_set':
      return `NOT ${present}`;
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = typeof filter.value === 'string' ? parseDateInput(filter.value, now) : null;
      if (!date) throw new PropertyFilterError(`property filter on ${filter.key}: ${JSON.stringify(filter.value)} is not a date`);
      return when(`${timeOf(text)} ${COMPARISONS[operator]} ${param(date.toISOString())}::timestamptz`);
    }
    default:
      throw new PropertyFilterError(`property filter on ${filter.key}: unknown operator ${JSON.stringify(operator)} for a property value`);
  }
}

/** Every filter must hold (`TRUE` for none), over the jsonb `column`; parameters are numbered from `firstParam`. */
export function postgresPropertyConditions(column: string, filters: readonly StoredPropertyFilter[], firstParam: number, now: Date): PgCondition {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  const parts = filters.map((filter) => postgresPropertyCondition(column, filter, param, now));
  return { text: parts.length === 0 ? 'TRUE' : parts.map((p) => `(${p})`).join(' AND '), params };
}
