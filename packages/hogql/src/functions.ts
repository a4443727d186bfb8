import { queryError } from './errors.js';
import type { ServerFeature } from './server-features.js';

/**
 * The functions a HogQL query may call, each mapped to what both ClickHouse 18.16 and current
 * releases run, or marked with the feature of a newer release it needs (`since`). A name not here
 * is refused before anything reaches ClickHouse, so no function that reads files, URLs, other
 * tables or server state can be reached through a query.
 */
export interface FunctionSpec {
  /** ClickHouse's name, or a renderer of the printed arguments (and parameters) for a rewrite. */
  clickhouse: string | ((args: string[], params: string[]) => string);
  min: number;
  max: number;
  aggregate?: boolean;
  /** Parametric aggregates (`quantile(0.9)(x)`): how many parameters they take. */
  params?: [number, number];
  /** Arguments that are lambdas (`arrayMap(x -> x + 1, arr)`): a lambda may only stand there. */
  lambdaFirst?: boolean;
  /** What a server needs to run it; refused with a 400 on one without. */
  since?: ServerFeature;
}

const MANY = 64;

const fn = (clickhouse: FunctionSpec['clickhouse'], min: number, max = min): FunctionSpec => ({ clickhouse, min, max });
const agg = (clickhouse: string, min: number, max = min, params?: [number, number]): FunctionSpec => ({ clickhouse, min, max, aggregate: true, ...(params && { params }) });
const lambda = (clickhouse: string, min: number, max = MANY): FunctionSpec => ({ clickhouse, min, max, lambdaFirst: true });

/**
 * `arrayReduce` names its aggregate in a string: only these, so a query reaches no aggregate this
 * list does not vet. The `-Array` two flatten an array of arrays on every server (18.16 has no arrayFlatten).
 */
const REDUCIBLE = new Set(['min', 'max', 'sum', 'avg', 'groupArrayArray', 'groupUniqArrayArray']);
function reduceWith(args: string[]): string {
  const name = /^'([A-Za-z]+)'$/.exec(args[0] ?? '')?.[1];
  if (!name || !REDUCIBLE.has(name)) throw queryError(`arrayReduce takes one of ${[...REDUCIBLE].join(', ')} as its first argument, a string`);
  return `arrayReduce(${args.join(', ')})`;
}

/** Aggregates that also take the `-If` combinator: one more argument, the condition. */
const AGGREGATES: Record<string, FunctionSpec> = {
  count: agg('count', 0, 1),
  min: agg('min', 1),
  max: agg('max', 1),
  sum: agg('sum', 1),
  avg: agg('avg', 1),
  any: agg('any', 1),
  anyLast: agg('anyLast', 1),
  anyHeavy: agg('anyHeavy', 1),
  argMin: agg('argMin', 2),
  argMax: agg('argMax', 2),
  uniq: agg('uniq', 1, 8),
  uniqExact: agg('uniqExact', 1, 8),
  uniqHLL12: agg('uniqHLL12', 1, 8),
  groupArray: agg('groupArray', 1),
  groupUniqArray: agg('groupUniqArray', 1),
  median: agg('median', 1),
  medianExact: agg('medianExact', 1),
  quantile: agg('quantile', 1, 1, [1, 1]),
  quantiles: agg('quantiles', 1, 1, [1, 20]),
  quantileExact: agg('quantileExact', 1, 1, [1, 1]),
  topK: agg('topK', 1, 1, [1, 1]),
  stddevPop: agg('stddevPop', 1),
  stddevSamp: agg('stddevSamp', 1),
  varPop: agg('varPop', 1),
  varSamp: agg('varSamp', 1),
  covarPop: agg('covarPop', 2),
  covarSamp: agg('covarSamp', 2),
  corr: agg('corr', 2),
};

const ifForms = Object.fromEntries(
  Object.entries(AGGREGATES).map(([name, spec]) => [`${name}If`, { ...spec, clickhouse: `${spec.clickhouse as string}If`, min: spec.min + 1, max: spec.max + 1 }]),
);

const asText = (arg: string) => `toString(${arg})`;

const FUNCTIONS: Record<string, FunctionSpec> = {
  ...AGGREGATES,
  ...ifForms,
  windowFunnel: agg('windowFunnel', 2, 33, [1, 1]),
  retention: agg('retention', 1, 32),
  sequenceMatch: agg('sequenceMatch', 2, 33, [1, 1]),
  sequenceCount: agg('sequenceCount', 2, 33, [1, 1]),

  // Conversions: toInt/toFloat give NULL for what does not parse, as PostHog's do. toDateTime refuses
  // it instead: 18.16 cannot compare the key's DateTime with a Nullable one (code 49).
  toString: fn('toString', 1, 2),
  toInt: fn(([a]) => `toInt64OrNull(${asText(a!)})`, 1),
  toFloat: fn(([a]) => `toFloat64OrNull(${asText(a!)})`, 1),
  toIntOrZero: fn(([a]) => `toInt64OrZero(${asText(a!)})`, 1),
  toFloatOrZero: fn(([a]) => `toFloat64OrZero(${asText(a!)})`, 1),
  toDateTime: fn((args) => `parseDateTimeBestEffort(${asText(args[0]!)}, ${args[1] ?? "'UTC'"})`, 1, 2),
  toDate: fn('toDate', 1, 2),
  parseDateTimeBestEffortOrNull: fn('parseDateTimeBestEffortOrNull', 1, 2),
  toUUID: fn('toUUID', 1),
  toInt64: fn('toInt64', 1),
  toUInt64: fn('toUInt64', 1),
  toUInt32: fn('toUInt32', 1),
  toFloat64: fn('toFloat64', 1),
  toInt64OrNull: fn('toInt64OrNull', 1),
  toFloat64OrNull: fn('toFloat64OrNull', 1),
  toTypeName: fn('toTypeName', 1),

  // Dates and intervals; the optional second argument of the conversions is a timezone.
  now: fn('now', 0),
  today: fn('today', 0),
  yesterday: fn('yesterday', 0),
  toTimeZone: fn('toTimeZone', 2),
  toStartOfMinute: fn('toStartOfMinute', 1, 2),
  toStartOfFiveMinute: fn('toStartOfFiveMinute', 1),
  toStartOfFifteenMinutes: fn('toStartOfFifteenMinutes', 1),
  toStartOfHour: fn('toStartOfHour', 1, 2),
  toStartOfDay: fn('toStartOfDay', 1, 2),
  toMonday: fn('toMonday', 1, 2),
  toStartOfMonth: fn('toStartOfMonth', 1, 2),
  toStartOfQuarter: fn('toStartOfQuarter', 1, 2),
  toStartOfYear: fn('toStartOfYear', 1, 2),
  toYear: fn('toYear', 1, 2),
  toQuarter: fn('toQuarter', 1, 2),
  toMonth: fn('toMonth', 1, 2),
  toISOWeek: fn('toISOWeek', 1, 2),
  toDayOfYear: fn('toDayOfYear', 1, 2),
  toDayOfMonth: fn('toDayOfMonth', 1, 2),
  toDayOfWeek: fn('toDayOfWeek', 1, 2),
  toHour: fn('toHour', 1, 2),
  toMinute: fn('toMinute', 1, 2),
  toSecond: fn('toSecond', 1),
  toYYYYMM: fn('toYYYYMM', 1, 2),
  toYYYYMMDD: fn('toYYYYMMDD', 1, 2),
  toUnixTimestamp: fn('toUnixTimestamp', 1),
  formatDateTime: fn('formatDateTime', 2, 3),
  dateDiff: fn('dateDiff', 3, 4),
  date_diff: fn('dateDiff', 3, 4),
  ...Object.fromEntries(
    ['Second', 'Minute', 'Hour', 'Day', 'Week', 'Month', 'Quarter', 'Year'].flatMap((unit) => [
      [`toInterval${unit}`, fn(`toInterval${unit}`, 1)],
      [`add${unit}s`, fn(`add${unit}s`, 2)],
      [`subtract${unit}s`, fn(`subtract${unit}s`, 2)],
    ]),
  ),

  // Text and patterns (RE2 patterns are checked by ClickHouse; a bad one is a 400).
  length: fn('length', 1),
  lengthUTF8: fn('lengthUTF8', 1),
  empty: fn('empty', 1),
  notEmpty: fn('notEmpty', 1),
  lower: fn('lower', 1),
  upper: fn('upper', 1),
  lowerUTF8: fn('lowerUTF8', 1),
  upperUTF8: fn('upperUTF8', 1),
  reverse: fn('reverse', 1),
  concat: fn((args) => `concat(${args.map(asText).join(', ')})`, 1, MANY),
  substring: fn('substring', 2, 3),
  substringUTF8: fn('substringUTF8', 2, 3),
  startsWith: fn('startsWith', 2),
  endsWith: fn('endsWith', 2),
  position: fn('position', 2),
  positionCaseInsensitive: fn('positionCaseInsensitive', 2),
  replaceAll: fn('replaceAll', 3),
  replaceOne: fn('replaceOne', 3),
  replaceRegexpAll: fn('replaceRegexpAll', 3),
  replaceRegexpOne: fn('replaceRegexpOne', 3),
  match: fn('match', 2),
  extract: fn('extract', 2),
  extractAll: fn('extractAll', 2),
  like: fn('like', 2),
  notLike: fn('notLike', 2),
  splitByChar: fn('splitByChar', 2),
  splitByString: fn('splitByString', 2),
  arrayStringConcat: fn('arrayStringConcat', 1, 2),
  domain: fn('domain', 1),
  domainWithoutWWW: fn('domainWithoutWWW', 1),
  topLevelDomain: fn('topLevelDomain', 1),
  protocol: fn('protocol', 1),
  path: fn('path', 1),
  extractURLParameter: fn('extractURLParameter', 2),
  cutQueryString: fn('cutQueryString', 1),
  visitParamHas: fn('visitParamHas', 2),
  visitParamExtractString: fn('visitParamExtractString', 2),
  visitParamExtractRaw: fn('visitParamExtractRaw', 2),
  visitParamExtractInt: fn('visitParamExtractInt', 2),
  visitParamExtractFloat: fn('visitParamExtractFloat', 2),
  visitParamExtractBool: fn('visitParamExtractBool', 2),
  // A JSON document, then the keys (or 1-based indexes) of the path to read.
  ...Object.fromEntries(
    ['JSONHas', 'JSONLength', 'JSONType', 'JSONExtractString', 'JSONExtractInt', 'JSONExtractUInt', 'JSONExtractFloat', 'JSONExtractBool', 'JSONExtractRaw'].map((name): [string, FunctionSpec] => [
      name,
      { ...fn(name, 1, MANY), since: 'jsonFunctions' },
    ]),
  ),

  // Conditions and nulls.
  if: fn('if', 3),
  multiIf: fn('multiIf', 3, MANY),
  _caseWithExpression: fn('caseWithExpression', 4, MANY),
  coalesce: fn('coalesce', 1, MANY),
  ifNull: fn('ifNull', 2),
  nullIf: fn('nullIf', 2),
  isNull: fn('isNull', 1),
  isNotNull: fn('isNotNull', 1),
  assumeNotNull: fn('assumeNotNull', 1),
  greatest: fn('greatest', 2),
  least: fn('least', 2),
  and: fn('and', 2, MANY),
  or: fn('or', 2, MANY),
  not: fn('not', 1),
  equals: fn('equals', 2),
  notEquals: fn('notEquals', 2),
  less: fn('less', 2),
  greater: fn('greater', 2),
  lessOrEquals: fn('lessOrEquals', 2),
  greaterOrEquals: fn('greaterOrEquals', 2),
  // Printed as the IN operator is (the printer's `membership`): ClickHouse reads a name as their second argument as a table.
  in: fn('in', 2),
  notIn: fn('notIn', 2),

  // Arithmetic.
  plus: fn('plus', 2),
  minus: fn('minus', 2),
  multiply: fn('multiply', 2),
  divide: fn('divide', 2),
  intDiv: fn('intDiv', 2),
  modulo: fn('modulo', 2),
  negate: fn('negate', 1),
  abs: fn('abs', 1),
  round: fn('round', 1, 2),
  floor: fn('floor', 1, 2),
  ceil: fn('ceil', 1, 2),
  sqrt: fn('sqrt', 1),
  exp: fn('exp', 1),
  log: fn('log', 1),
  log2: fn('log2', 1),
  log10: fn('log10', 1),
  pow: fn('pow', 2),
  power: fn('pow', 2),
  bitAnd: fn('bitAnd', 2),
  bitOr: fn('bitOr', 2),
  bitXor: fn('bitXor', 2),
  bitNot: fn('bitNot', 1),
  bitShiftLeft: fn('bitShiftLeft', 2),
  bitShiftRight: fn('bitShiftRight', 2),
  bitTest: fn('bitTest', 2),

  // Arrays and tuples.
  arrayJoin: fn('arrayJoin', 1),
  array: fn('array', 0, MANY),
  tuple: fn('tuple', 1, MANY),
  tupleElement: fn('tupleElement', 2),
  transform: fn('transform', 3, 4),
  has: fn('has', 2),
  hasAll: fn('hasAll', 2),
  hasAny: fn('hasAny', 2),
  indexOf: fn('indexOf', 2),
  arrayElement: fn('arrayElement', 2),
  arraySlice: fn('arraySlice', 2, 3),
  arrayConcat: fn('arrayConcat', 1, MANY),
  arrayDistinct: fn('arrayDistinct', 1),
  arrayEnumerate: fn('arrayEnumerate', 1),
  arrayReverse: fn('arrayReverse', 1),
  arrayDifference: fn('arrayDifference', 1),
  arrayCumSumNonNegative: fn('arrayCumSumNonNegative', 1),
  arrayReduce: fn(reduceWith, 2, MANY),
  range: fn('range', 1),
  emptyArrayString: fn('emptyArrayString', 0),
  arrayMap: lambda('arrayMap', 2),
  arrayFilter: lambda('arrayFilter', 2),
  arrayExists: lambda('arrayExists', 1),
  arrayAll: lambda('arrayAll', 1),
  arrayCount: lambda('arrayCount', 1),
  arraySum: lambda('arraySum', 1),
  arrayCumSum: lambda('arrayCumSum', 1),
  arrayFirst: lambda('arrayFirst', 2),
  arrayFirstIndex: lambda('arrayFirstIndex', 2),
  arraySort: lambda('arraySort', 1),

  // Hashes.
  cityHash64: fn('cityHash64', 1, MANY),
  sipHash64: fn('sipHash64', 1, MANY),
};

/** Functions that stand only before OVER (ranks, other rows' values); every aggregate may too. */
const WINDOW_ONLY: Record<string, FunctionSpec> = {
  row_number: fn('row_number', 0),
  rank: fn('rank', 0),
  dense_rank: fn('dense_rank', 0),
  lagInFrame: fn('lagInFrame', 1, 3),
  leadInFrame: fn('leadInFrame', 1, 3),
  first_value: fn('first_value', 1),
  last_value: fn('last_value', 1),
  nth_value: fn('nth_value', 2),
};

const WINDOW_BY_LOWER_NAME = new Map(
  [...Object.entries(WINDOW_ONLY), ...Object.entries(FUNCTIONS).filter(([, spec]) => spec.aggregate)].map(([name, spec]) => [name.toLowerCase(), { name, spec }]),
);

/** A function that may stand before OVER: a window-only one or an aggregate. */
export function lookupWindowFunction(name: string): { name: string; spec: FunctionSpec } | undefined {
  return WINDOW_BY_LOWER_NAME.get(name.toLowerCase());
}

/** Lower-cased names, so `COUNT()` and `Lower()` resolve as ClickHouse's case-insensitive ones do. */
const BY_LOWER_NAME = new Map(Object.entries(FUNCTIONS).map(([name, spec]) => [name.toLowerCase(), { name, spec }]));

export function lookupFunction(name: string): { name: string; spec: FunctionSpec } | undefined {
  return BY_LOWER_NAME.get(name.toLowerCase());
}

export const FUNCTION_NAMES: readonly string[] = Object.keys(FUNCTIONS);

/** Whether an expression aggregates anywhere outside a subquery: EventsQuery groups by the columns that do not. */
export function containsAggregate(expr: unknown): boolean {
  if (typeof expr !== 'object' || expr === null) return false;
  const node = expr as { node?: string; name?: string };
  if (node.node === 'SelectQuery' || node.node === 'SelectSetQuery') return false;
  if (node.node === 'Call' && node.name !== undefined && lookupFunction(node.name)?.spec.aggregate) return true;
  return Object.values(expr).some((value) => (Array.isArray(value) ? value.some(containsAggregate) : containsAggregate(value)));
}

/** Whether an expression names `*` or `table.*` outside any subquery of its own. */
export function containsAsterisk(expr: unknown): boolean {
  if (typeof expr !== 'object' || expr === null) return false;
  const node = expr as { node?: string; chain?: unknown[] };
  if (node.node === 'SelectQuery' || node.node === 'SelectSetQuery') return false;
  if (node.node === 'Field' && node.chain?.at(-1) === '*') return true;
  return Object.values(expr).some((value) => (Array.isArray(value) ? value.some(containsAsterisk) : containsAsterisk(value)));
}
