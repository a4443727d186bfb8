import { rowId } from '@tributary/postgres/row-id';

/**
 * PostHog's property filter, the one model every reader of filters shares: flag conditions,
 * cohort definitions, and the `properties` parameter of the events and persons APIs.
 */
export const PROPERTY_OPERATORS = [
  'exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'is_set', 'is_not_set', 'is_date_before', 'is_date_after', 'is_date_exact', 'in', 'not_in',
] as const;
export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number];

/** `in`/`not_in` test membership of the cohort a filter names; every other operator tests a property's value. */
export type CohortOperator = Extract<PropertyOperator, 'in' | 'not_in'>;
export type ValueOperator = Exclude<PropertyOperator, CohortOperator>;

/** What a filter over events may test: flags and cohorts accept fewer (see their own lists). */
export const PROPERTY_FILTER_TYPES = ['event', 'person', 'group', 'cohort', 'element'] as const;
export type PropertyFilterType = (typeof PROPERTY_FILTER_TYPES)[number];

export type Scalar = string | number | boolean;

export interface PropertyFilter {
  key: string;
  /** Whose properties: defaults to `person` in flags and cohorts, `event` in the events API. */
  type?: PropertyFilterType;
  /** Defaults to `exact` (to `in` on a cohort filter). */
  operator?: PropertyOperator;
  value?: unknown;
  group_type_index?: number;
  negation?: boolean;
}

/** A filter as stored or sent, before validation: definitions saved before it was this strict may hold any string. */
export type StoredPropertyFilter = Omit<PropertyFilter, 'type' | 'operator'> & { type?: string; operator?: string };

/**
 * What `value` each operator takes. Writing it as a record over every operator is what makes the
 * list above complete: an operator added there without a value shape does not compile.
 */
export type ValueShape =
  /** a scalar, or a non-empty list of them meaning "any of" */
  | 'scalar_or_list'
  | 'scalar'
  /** a regular expression every backend can run */
  | 'pattern'
  /** an ISO 8601 date or a relative one such as `-7d` */
  | 'date'
  | 'none'
  | 'cohort_id';

export const VALUE_SHAPES: Record<PropertyOperator, ValueShape> = {
  exact: 'scalar_or_list',
  is_not: 'scalar_or_list',
  icontains: 'scalar',
  not_icontains: 'scalar',
  regex: 'pattern',
  not_regex: 'pattern',
  gt: 'scalar',
  gte: 'scalar',
  lt: 'scalar',
  lte: 'scalar',
  is_set: 'none',
  is_not_set: 'none',
  is_date_before: 'date',
  is_date_after: 'date',
  is_date_exact: 'date',
  in: 'cohort_id',
  not_in: 'cohort_id',
};

export const isCohortOperator = (operator: PropertyOperator): operator is CohortOperator => VALUE_SHAPES[operator] === 'cohort_id';
export const VALUE_OPERATORS = PROPERTY_OPERATORS.filter((operator): operator is ValueOperator => !isCohortOperator(operator));

/**
 * Text that reads as a number on every backend. Stricter than JavaScript's `Number()` (no hex, no
 * surrounding blanks, no `Infinity`, nothing too large for a double), because ClickHouse's and
 * Postgres's casts are.
 */
export const NUMERIC_PATTERN = '^-?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$';
const numeric = new RegExp(NUMERIC_PATTERN);
export const isNumeric = (value: unknown): boolean =>
  (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && numeric.test(value) && Number.isFinite(Number(value)));

/** A cohort id as filters hold it: a number or its text (see rowId). */
export const isCohortId = (value: unknown): boolean => rowId(value) !== null;

/** A value as the text every backend compares: strings as they are, anything else as JSON. */
export const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
