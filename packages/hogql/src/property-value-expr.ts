import {
  NUMERIC_PATTERN,
  PropertyFilterError,
  asText,
  isNumeric,
  parseDateInput,
  type StoredPropertyFilter,
  type ValueOperator,
} from '@tributary/property-filters';
import type { Expr, SelectQuery } from './ast.js';

/**
 * One property's test as HogQL, the leaf of every filter (`property-filter-expr.ts`), and the
 * small constructors the filter builders share. The conditions keep the flag matcher's semantics
 * (`matchProperty`'s, tested alike): a missing property satisfies only the negative operators,
 * `exact` ignores case, numbers compare as numbers.
 */

/** The parts of an autocaptured element a filter may test (PostHog's element filter keys). */
export const ELEMENT_KEYS = ['tag_name', 'text', 'href'] as const;

export const field = (...chain: string[]): Expr => ({ node: 'Field', chain });
export const constant = (value: string | number): Expr => ({ node: 'Constant', value });
export const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });
export const compare = (op: string, left: Expr, right: Expr): Expr => ({ node: 'CompareOperation', op, left, right });
// As the parser reads `NOT x`, so the HogQL printed back parses to the same tree.
export const not = (expr: Expr): Expr => call('not', expr);
export const and = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'And', exprs });
export const or = (exprs: Expr[]): Expr => (exprs.length === 1 ? exprs[0]! : { node: 'Or', exprs });
const tuple = (values: readonly (string | number)[]): Expr => ({ node: 'Tuple', exprs: values.map(constant) });
export const select = (columns: Expr[], table: string, where: Expr): SelectQuery => ({ node: 'SelectQuery', select: columns, select_from: { node: 'JoinExpr', table: { node: 'Field', chain: [table] } }, where });

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
  return jsonRawText(call('visitParamExtractRaw', column, constant(key)));
}

/** A property's raw JSON value (`visitParamExtractRaw`'s) as text: `''` for `''`, a string unquoted, anything else as written. */
function jsonRawText(raw: Expr): Expr {
  // A string is unquoted by parsing it alone, rather than the whole properties a second time.
  return call('if', compare('==', call('substring', raw, constant(1), constant(1)), constant('"')), call('visitParamExtractString', call('concat', constant('{"v":'), raw, constant('}')), constant('v')), raw);
}

/** A property's raw JSON value as HogQL reads a property: its text, NULL when absent, empty or JSON null (as the printer's `properties.key`). */
export function jsonRawValue(raw: Expr): Expr {
  return call('nullIf', call('nullIf', jsonRawText(raw), constant('')), constant('null'));
}

/** One filter on a property of a JSON properties column (`properties`, `poe.properties`, a person's or group's). */
export function jsonPropertyExpr(column: Expr, filter: StoredPropertyFilter, now: Date): Expr {
  const key = constant(filter.key);
  // A JSON null counts as set, as it does for flags.
  return propertyTest(call('visitParamHas', column, key), jsonPropertyText(column, filter.key), call('visitParamExtractRaw', column, key), filter, now);
}

/** One filter on a property whose presence, text and raw JSON are given. */
export function propertyTest(present: Expr, text: Expr, raw: Expr, filter: StoredPropertyFilter, now: Date): Expr {
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
export function elementExpr(filter: StoredPropertyFilter, now: Date): Expr {
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
