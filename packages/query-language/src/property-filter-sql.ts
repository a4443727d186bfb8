import { and, inList, sql, type Sql } from '@tributary/clickhouse';
import { QueryLanguageError } from './parse.js';
import { propertyIsSet, propertyNumber, propertyText } from './property-sql.js';
import { parseDateInput } from './relative-date.js';

/** A property filter as PostHog's API takes it in `properties=[...]`. */
export interface PropertyFilter {
  key: string;
  value?: unknown;
  operator?: string;
  type?: string;
  group_type_index?: number;
}

export const FILTER_OPERATORS = [
  'exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'is_set', 'is_not_set', 'is_date_before', 'is_date_after', 'in', 'not_in',
] as const;

export interface FilterContext {
  teamId: number;
  now: Date;
  /** Cohort id -> condition on the event's person, resolved by the caller (static or dynamic). */
  cohorts: ReadonlyMap<number, Sql>;
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const isNumeric = (value: unknown) => typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value)));

function regexPattern(value: unknown, key: string): string {
  const pattern = asText(value);
  try {
    new RegExp(pattern);
  } catch {
    throw new QueryLanguageError(`property filter on ${key}: ${JSON.stringify(pattern)} is not a valid regular expression`);
  }
  return pattern;
}

/** One operator applied to a property of a JSON text column (event, person or group properties). */
export function propertyCondition(column: Sql, filter: PropertyFilter, now: Date): Sql {
  const { key } = filter;
  const text = propertyText(column, key);
  const operator = filter.operator ?? 'exact';
  switch (operator) {
    case 'exact':
      return inList(sql`lower(${text})`, asList(filter.value).map((v) => asText(v).toLowerCase()));
    case 'is_not':
      return inList(sql`lower(${text})`, asList(filter.value).map((v) => asText(v).toLowerCase()), true);
    case 'icontains':
      return sql`positionCaseInsensitive(${text}, ${asText(filter.value)}) > 0`;
    case 'not_icontains':
      return sql`positionCaseInsensitive(${text}, ${asText(filter.value)}) = 0`;
    case 'regex':
      return sql`match(${text}, ${regexPattern(filter.value, key)})`;
    case 'not_regex':
      return sql`NOT match(${text}, ${regexPattern(filter.value, key)})`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const symbol = { gt: sql`>`, gte: sql`>=`, lt: sql`<`, lte: sql`<=` }[operator];
      return isNumeric(filter.value)
        ? sql`${propertyNumber(column, key)} ${symbol} ${Number(filter.value)}`
        : sql`${text} ${symbol} ${asText(filter.value)}`;
    }
    case 'is_set':
      return propertyIsSet(column, key);
    case 'is_not_set':
      return sql`NOT ${propertyIsSet(column, key)}`;
    case 'is_date_before':
    case 'is_date_after': {
      const date = parseDateInput(asText(filter.value), now);
      if (!date) throw new QueryLanguageError(`property filter on ${key}: ${JSON.stringify(filter.value)} is not a date`);
      const parsed = sql`parseDateTimeBestEffortOrNull(${text})`;
      return operator === 'is_date_before' ? sql`${parsed} < ${date}` : sql`${parsed} > ${date}`;
    }
    default:
      throw new QueryLanguageError(`unknown operator ${JSON.stringify(operator)}: use one of ${FILTER_OPERATORS.join(', ')}`);
  }
}

/** Compiles `properties=[...]` on the events table; all filters must hold. */
export function compilePropertyFilters(filters: readonly PropertyFilter[], context: FilterContext): Sql {
  return and(
    filters.map((filter) => {
      const type = filter.type ?? 'event';
      switch (type) {
        case 'event':
          return propertyCondition(sql`properties`, filter, context.now);
        case 'person':
          return propertyCondition(sql`person_properties`, filter, context.now);
        case 'group': {
          const index = filter.group_type_index;
          if (index === undefined || !Number.isInteger(index) || index < 0 || index > 4) {
            throw new QueryLanguageError(`group property filter on ${filter.key} needs group_type_index 0 to 4`);
          }
          const column = sql`${[sql`group_0`, sql`group_1`, sql`group_2`, sql`group_3`, sql`group_4`][index]!}`;
          return sql`${column} IN (SELECT group_key FROM groups FINAL WHERE team_id = ${context.teamId} AND group_type_index = ${index} AND ${propertyCondition(sql`group_properties`, filter, context.now)})`;
        }
        case 'cohort': {
          const id = Number(filter.value);
          const condition = context.cohorts.get(id);
          if (!condition) throw new QueryLanguageError(`cohort ${String(filter.value)} does not exist`);
          return filter.operator === 'not_in' ? sql`NOT (${condition})` : condition;
        }
        default:
          throw new QueryLanguageError(`unknown property filter type ${JSON.stringify(type)}: use event, person, group or cohort`);
      }
    }),
  );
}

/** Cohort ids a filter list refers to, so the caller can resolve them first. */
export function cohortIds(filters: readonly PropertyFilter[]): number[] {
  return filters.filter((f) => f.type === 'cohort').map((f) => Number(f.value));
}
