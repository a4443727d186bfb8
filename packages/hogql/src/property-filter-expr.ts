import {
  NUMERIC_PATTERN,
  PROPERTY_FILTER_TYPES,
  PropertyFilterError,
  asText,
  isCohortId,
  isNumeric,
  parseDateInput,
  propertyFilterProblem,
  type StoredPropertyFilter,
  type ValueOperator,
} from '@tributary/property-filters';
import type { ActionDefinition } from './action-definition.js';
import type { Expr, SelectQuery } from './ast.js';

/**
 * Property filters (PostHog's `properties=[...]`) as ordinary HogQL, as PostHog's `property_to_expr`
 * builds them: the printer resolves their names and guards every table they read like any query's,
 * and the HogQL printed back from them runs as it is. The conditions keep the flag matcher's
 * semantics (`matchProperty`'s, tested alike): a missing property satisfies only the negative
 * operators, `exact` ignores case, numbers compare as numbers.
 */

/** A static cohort's members' distinct ids (from Postgres), or a dynamic cohort's person-property groups. */
export type CohortDefinition = { id: number; static: true; distinctIds: readonly string[] } | { id: number; static: false; filters: CohortGroup };
export interface CohortGroup {
  type?: 'AND' | 'OR';
  values?: (CohortGroup | StoredPropertyFilter)[];
}

export interface FilterContext {
  now: Date;
  /** The cohorts filters name, looked up by the caller (`cohortIds`) in the project. */
  cohorts: ReadonlyMap<number, CohortDefinition>;
  /** The actions an `ActionsNode` names, looked up by the caller in the project. */
  actions?: ReadonlyMap<number, ActionDefinition>;
}

/** The parts of an autocaptured element a filter may test (PostHog's element filter keys). */
export const ELEMENT_KEYS = ['tag_name', 'text', 'href'] as const;

const field = (...chain: string[]): Expr => ({ node: 'Field', chain });
const constant = (value: string | number): Expr => ({ node: 'Constant', value });
const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });
const compare = (op: string, left: Expr, right: Expr): Expr => ({ node: 'CompareOperation', op, left, right });
// As the parser reads `NOT x`, so the HogQL printed back parses to the same tree.
const not = (expr: Expr): Expr => call('not', expr);
const and = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'And', exprs });
const or = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'Or', exprs });
const tuple = (values: readonly (string | number)[]): Expr => ({ node: 'Tuple', exprs: values.map(constant) });
const select = (columns: Expr[], table: string, where: Expr): SelectQuery => ({ node: 'SelectQuery', select: columns, select_from: { node: 'JoinExpr', table: { node: 'Field', chain: [table] } }, where });

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const COMPARISONS: Partial<Record<ValueOperator, string>> = { gt: '>', gte: '>=', lt: '<', lte: '<=', is_date_before: '<', is_date_after: '>', is_date_exact: '==' };
/** The negative operators, each the NOT of a positive one. */
const NEGATED: Partial<Record<ValueOperator, ValueOperator>> = { is_not: 'exact', not_icontains: 'icontains', not_regex: 'regex' };

/** The positive test of one value: `text` is the value as text, `raw` as JSON (a number unquoted). */
function valueTest(operator: ValueOperator, filter: StoredPropertyFilter, text: Expr, raw: Expr, now: Date): Expr {
  switch (operator) {
    case 'exact':
      return compare('in', call('lowerUTF8', text), tuple(asList(filter.value).map((v) => asText(v).toLowerCase())));
    case 'icontains':
      return compare('>', call('positionCaseInsensitive', text, constant(asText(filter.value))), constant(0));
    case 'regex':
      return call('match', text, constant(asText(filter.value)));
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = COMPARISONS[operator]!;
      const asString = compare(op, text, constant(String(filter.value)));
      if (!isNumeric(filter.value)) return asString;
      const value = constant(Number(filter.value));
      const numeric = (e: Expr) => call('match', e, constant(NUMERIC_PATTERN));
      // A JSON number reads as a number directly; a string holding one needs unquoting first.
      return call('multiIf', numeric(raw), compare(op, call('toFloat64OrNull', raw), value), numeric(text), compare(op, call('toFloat64OrNull', text), value), asString);
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const date = typeof filter.value === 'string' ? parseDateInput(filter.value, now) : null;
      if (!date) throw new PropertyFilterError(`property filter on ${filter.key}: ${JSON.stringify(filter.value)} is not a date`);
      const parsed = call('parseDateTimeBestEffortOrNull', text, constant('UTC'));
      return and([compare('!=', text, constant('')), compare(COMPARISONS[operator]!, parsed, call('toDateTime', constant(date.toISOString())))]);
    }
    default:
      throw new PropertyFilterError(`property filter on ${filter.key}: unknown operator ${JSON.stringify(operator)} for a property value`);
  }
}

/** A property of a JSON properties column as text: `''` when absent, a string unquoted, anything else as its JSON. */
export function jsonPropertyText(column: Expr, key: string): Expr {
  const raw = call('visitParamExtractRaw', column, constant(key));
  // A string is unquoted by parsing it alone, rather than the whole properties a second time.
  return call('if', compare('==', call('substring', raw, constant(1), constant(1)), constant('"')), call('visitParamExtractString', call('concat', constant('{"v":'), raw, constant('}')), constant('v')), raw);
}

/** One filter on a property of a JSON properties column (`properties`, `poe.properties`, a person's or group's). */
export function jsonPropertyExpr(column: Expr, filter: StoredPropertyFilter, now: Date): Expr {
  const key = constant(filter.key);
  // A JSON null counts as set, as it does for flags.
  return propertyTest(call('visitParamHas', column, key), jsonPropertyText(column, filter.key), call('visitParamExtractRaw', column, key), filter, now);
}

/** One filter on a property whose presence, text and raw JSON are given. */
function propertyTest(present: Expr, text: Expr, raw: Expr, filter: StoredPropertyFilter, now: Date): Expr {
  const operator = (filter.operator ?? 'exact') as ValueOperator;
  if (operator === 'is_set') return present;
  if (operator === 'is_not_set') return not(present);
  const positive = NEGATED[operator];
  if (positive) return or([not(present), not(valueTest(positive, filter, text, raw, now))]);
  return and([present, valueTest(operator, filter, text, raw, now)]);
}

/**
 * What an element filter reads of `elements_chain` (`a.btn:href="/x"nth-child="1"text="Buy";div...`):
 * each element's tag, or each value of one attribute (escaped quotes kept, as the chain holds them).
 */
const ELEMENT_VALUES: Record<(typeof ELEMENT_KEYS)[number], string> = {
  tag_name: '(?:^|;)([A-Za-z0-9_-]+)',
  text: '(?:^|[:"])text="((?:\\\\.|[^"\\\\])*)"',
  href: '(?:^|[:"])href="((?:\\\\.|[^"\\\\])*)"',
};

/** An element filter: whether any element of the chain matches (none, for the negative operators). */
function elementExpr(filter: StoredPropertyFilter, now: Date): Expr {
  if (!(ELEMENT_KEYS as readonly string[]).includes(filter.key)) throw new PropertyFilterError(`element filter on ${filter.key}: key must be one of ${ELEMENT_KEYS.join(', ')}`);
  const values = call('extractAll', field('elements_chain'), constant(ELEMENT_VALUES[filter.key as (typeof ELEMENT_KEYS)[number]]));
  const operator = (filter.operator ?? 'exact') as ValueOperator;
  if (operator === 'is_set') return call('notEmpty', values);
  if (operator === 'is_not_set') return call('empty', values);
  const value = field('element_value');
  const any = (test: ValueOperator) => call('arrayExists', { node: 'Lambda', args: ['element_value'], expr: valueTest(test, filter, value, value, now) }, values);
  const positive = NEGATED[operator];
  return positive ? not(any(positive)) : any(operator);
}

const isGroup = (value: CohortGroup | StoredPropertyFilter): value is CohortGroup => !('key' in value);

/** A dynamic cohort's nested AND/OR groups of person-property filters, over the project's current persons. */
function cohortGroupExpr(group: CohortGroup, now: Date): Expr {
  const parts = (group.values ?? []).map((value) => {
    if (isGroup(value)) return cohortGroupExpr(value, now);
    const condition = jsonPropertyExpr(field('properties'), value, now);
    return value.negation ? not(condition) : condition;
  });
  if (parts.length === 0) return constant(1);
  return group.type === 'OR' ? or(parts) : and(parts);
}

/**
 * Membership of a cohort, through the event's distinct id, so events sent before a merge still
 * count for the person: a static cohort's members are listed; a dynamic cohort's are the persons
 * its filters match, read as the printer reads persons (each one's latest version, deleted ones left out).
 */
function cohortExpr(filter: StoredPropertyFilter, context: FilterContext): Expr {
  const cohort = context.cohorts.get(Number(filter.value));
  if (!cohort) throw new PropertyFilterError(`cohort ${String(filter.value)} does not exist`);
  const members = cohort.static
    ? compare('in', field('distinct_id'), { node: 'Constant', value: [...cohort.distinctIds] })
    : compare('in', field('distinct_id'), select([field('distinct_id')], 'person_distinct_ids', compare('in', field('person_id'), select([field('id')], 'persons', cohortGroupExpr(cohort.filters, context.now)))));
  return filter.operator === 'not_in' ? not(members) : members;
}

const GROUP_COLUMN = /^\$group_[0-4]$/;

/** One filter over a row of `events`, of any type; event properties are the default. */
function filterExpr(filter: StoredPropertyFilter, context: FilterContext): Expr {
  switch (filter.type ?? 'event') {
    case 'event': {
      // Ingest keeps an event's groups in its `$group_N` columns only, where PostHog copies them into
      // the properties too: a filter on one (a group's events, as PostHog's UI asks) reads the column.
      if (GROUP_COLUMN.test(filter.key)) {
        const column = field(filter.key);
        return propertyTest(compare('!=', column, constant('')), column, column, filter, context.now);
      }
      return jsonPropertyExpr(field('properties'), filter, context.now);
    }
    case 'person':
      // As at the event, as PostHog's person-on-events mode reads them.
      return jsonPropertyExpr(field('poe', 'properties'), filter, context.now);
    case 'group': {
      const index = filter.group_type_index;
      if (index === undefined) throw new PropertyFilterError(`group property filter on ${filter.key} needs group_type_index 0 to 4`);
      const keys = select([field('key')], 'groups', and([compare('==', field('index'), constant(index)), jsonPropertyExpr(field('properties'), filter, context.now)]));
      return compare('in', field(`$group_${index}`), keys);
    }
    case 'element':
      return elementExpr(filter, context.now);
    default:
      return cohortExpr(filter, context);
  }
}

/** `properties=[...]` over the events table, one condition per filter, all of which must hold; each is checked first. */
export function propertyFilterExprs(filters: readonly StoredPropertyFilter[], context: FilterContext, at = 'properties'): Expr[] {
  return filters.map((filter, i) => {
    const problem = propertyFilterProblem(filter, `${at}[${i}]`, { types: PROPERTY_FILTER_TYPES, now: context.now });
    if (problem) throw new PropertyFilterError(`property filter on ${String(filter.key)}: ${problem.detail}`);
    return filterExpr(filter, context);
  });
}

/**
 * Cohort ids a filter list refers to, so the caller can look them up first. Only well-formed ids:
 * the caller looks them up in Postgres, and a filter with any other value is refused when built.
 */
export function cohortIds(filters: readonly StoredPropertyFilter[]): number[] {
  return filters.filter((f) => f.type === 'cohort' && isCohortId(f.value)).map((f) => Number(f.value));
}
