import { inList, propertyIsSet, propertyNumber, propertyText, sql, type Sql } from '@tributary/clickhouse';
import { NUMERIC_PATTERN, asText, isNumeric, type StoredPropertyFilter, type ValueOperator } from './property-filter.js';
import { PropertyFilterError } from './property-filter-error.js';
import { parseDateInput } from './relative-date.js';

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const COMPARISONS = { gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=`, is_date_before: sql`<`, is_date_after: sql`>`, is_date_exact: sql`=` };

/**
 * One filter on a property of a JSON text column (event, person or group properties), as
 * ClickHouse SQL with the in-memory matcher's semantics: a missing property satisfies only the
 * negative operators, so each condition says whether the property is there. `icontains` folds
 * only ASCII case (`positionCaseInsensitive`), where the matcher folds all of Unicode.
 */
export function clickhousePropertyCondition(column: Sql, filter: StoredPropertyFilter, now: Date): Sql {
  const { key } = filter;
  const text = propertyText(column, key);
  const present = propertyIsSet(column, key);
  const operator: ValueOperator = (filter.operator ?? 'exact') as ValueOperator;
  const when = (condition: Sql) => sql`(${present} AND ${condition})`;
  const unless = (condition: Sql) => sql`(NOT ${present} OR ${condition})`;
  switch (operator) {
    case 'exact':
      return when(inList(sql`lowerUTF8(${text})`, asList(filter.value).map((v) => asText(v).toLowerCase())));
    case 'is_not':
      return unless(inList(sql`lowerUTF8(${text})`, asList(filter.value).map((v) => asText(v).toLowerCase()), true));
    case 'icontains':
      return when(sql`positionCaseInsensitive(${text}, ${asText(filter.value)}) > 0`);
    case 'not_icontains':
      return unless(sql`positionCaseInsensitive(${text}, ${asText(filter.value)}) = 0`);
    case 'regex':
      return when(sql`match(${text}, ${asText(filter.value)})`);
    case 'not_regex':
      return unless(sql`NOT match(${text}, ${asText(filter.value)})`);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const symbol = COMPARISONS[operator];
      const asString = sql`${text} ${symbol} ${String(filter.value)}`;
      if (!isNumeric(filter.value)) return when(asString);
      const value = Number(filter.value);
      // A JSON number reads as a number directly; a string holding one needs unquoting first.
      return when(sql`multiIf(match(visitParamExtractRaw(${column}, ${key}), ${NUMERIC_PATTERN}), ${propertyNumber(column, key)} ${symbol} ${value},
        match(${text}, ${NUMERIC_PATTERN}), toFloat64OrNull(${text}) ${symbol} ${value}, ${asString})`);
    }
    case 'is_set':
      return present;
    case 'is_not_set':
      return sql`NOT ${present}`;
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = typeof filter.value === 'string' ? parseDateInput(filter.value, now) : null;
      if (!date) throw new PropertyFilterError(`property filter on ${key}: ${JSON.stringify(filter.value)} is not a date`);
      return when(sql`${text} != '' AND parseDateTimeBestEffortOrNull(${text}, 'UTC') ${COMPARISONS[operator]} ${date}`);
    }
    default:
      throw new PropertyFilterError(`property filter on ${key}: unknown operator ${JSON.stringify(operator)} for a property value`);
  }
}
