import { DateTime } from 'luxon';

/**
 * The insight kinds computed the slow, obvious way: from the raw rows, in plain TypeScript, one
 * rule at a time, so each answer of the query endpoint can be checked against it. It shares no code
 * with `src/query`; where the two disagree one of them misreads PostHog.
 *
 * The rows as ClickHouse holds them: an event's person is the current person of its distinct id
 * (the latest version of person_distinct_id, unless that version is a deletion), else the person
 * stored on the event. Event-time person properties (`person_properties` on the event) are what
 * person property filters test; breakdowns by person read the current person.
 */

// ---- The raw rows.

export interface RawEvent {
  event: string;
  distinctId: string;
  /** Epoch milliseconds; the store keeps whole seconds, so only those count. */
  time: number;
  properties: Record<string, unknown>;
  personProperties: Record<string, unknown>;
  storedPersonId: string;
  group0: string;
}

export interface RawPerson {
  id: string;
  createdAt: number;
  properties: Record<string, unknown>;
  version: number;
}

export interface RawDistinctId {
  distinctId: string;
  personId: string;
  version: number;
  isDeleted: boolean;
}

export interface World {
  timezone: string;
  events: RawEvent[];
  persons: RawPerson[];
  distinctIds: RawDistinctId[];
}

/** An event joined with its person, as every kind reads it. */
export interface Row {
  event: string;
  time: number;
  properties: Record<string, unknown>;
  personProperties: Record<string, unknown>;
  group0: string;
  personId: string;
  person: RawPerson | null;
}

export function rowsOf(world: World): Row[] {
  const latest = new Map<string, RawDistinctId>();
  for (const d of world.distinctIds) {
    const seen = latest.get(d.distinctId);
    if (!seen || d.version > seen.version) latest.set(d.distinctId, d);
  }
  const persons = new Map<string, RawPerson>();
  for (const p of world.persons) if ((persons.get(p.id)?.version ?? -1) < p.version) persons.set(p.id, p);
  return world.events.map((e) => {
    const mapping = latest.get(e.distinctId);
    const personId = mapping && !mapping.isDeleted ? mapping.personId : e.storedPersonId;
    return {
      event: e.event,
      time: Math.floor(e.time / 1000) * 1000,
      properties: e.properties,
      personProperties: e.personProperties,
      group0: e.group0,
      personId,
      person: mapping && !mapping.isDeleted ? (persons.get(mapping.personId) ?? null) : null,
    };
  });
}

// ---- Properties and filters.

export interface PropertyFilter {
  key: string;
  /** `session`: a property of the event's session, which only the web analytics reference reads. */
  type?: 'event' | 'person' | 'session';
  operator?: 'exact' | 'is_not' | 'is_set' | 'is_not_set' | 'icontains' | 'gt' | 'lt';
  value?: unknown;
}

/** A property as JSON text reads: strings unquoted, anything else as its JSON; undefined when absent. */
function rawText(props: Record<string, unknown>, key: string): string | undefined {
  if (!Object.hasOwn(props, key)) return undefined;
  const value = props[key];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A property as a HogQL field gives it: absent, empty and JSON null are all null. */
export function propertyValue(props: Record<string, unknown>, key: string): string | null {
  const text = rawText(props, key);
  return text === undefined || text === '' || text === 'null' ? null : text;
}

const toFloat = (text: string | null): number | null => (text !== null && /^-?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/.test(text) ? Number(text) : null);

/** The flag matcher's rules: a missing property satisfies only the negative operators. */
function matchesFilter(filter: PropertyFilter, row: Row): boolean {
  const props = (filter.type ?? 'event') === 'person' ? row.personProperties : row.properties;
  const text = rawText(props, filter.key);
  const values = (Array.isArray(filter.value) ? filter.value : [filter.value]).map((v) => String(v).toLowerCase());
  switch (filter.operator ?? 'exact') {
    case 'exact':
      return text !== undefined && values.includes(text.toLowerCase());
    case 'is_not':
      return text === undefined || !values.includes(text.toLowerCase());
    case 'is_set':
      return text !== undefined;
    case 'is_not_set':
      return text === undefined;
    case 'icontains':
      return text !== undefined && text.toLowerCase().includes(String(filter.value).toLowerCase());
    case 'gt':
    case 'lt': {
      const n = toFloat(text ?? null);
      if (n === null) return false;
      return filter.operator === 'gt' ? n > Number(filter.value) : n < Number(filter.value);
    }
  }
}

export const passes = (filters: readonly PropertyFilter[] | undefined, row: Row) => (filters ?? []).every((f) => matchesFilter(f, row));

// ---- The calendar of the project's zone.

export type Interval = 'hour' | 'day' | 'week' | 'month';
const UNIT = { hour: 'hours', day: 'days', week: 'weeks', month: 'months' } as const;

class Calendar {
  constructor(private readonly zone: string) {}
  local = (ms: number) => DateTime.fromMillis(ms, { zone: this.zone });
  /** Weeks start on Monday (luxon's ISO weeks). */
  start = (ms: number, interval: Interval) => this.local(ms).startOf(interval).toMillis();
  add = (ms: number, interval: Interval, n: number) => this.local(ms).plus({ [UNIT[interval]]: n }).toMillis();
  /** A date such as `2024-01-01`: local midnight. */
  midnight = (date: string) => DateTime.fromISO(date, { zone: this.zone }).toMillis();
  day = (ms: number, interval: Interval) => this.local(ms).toFormat(interval === 'hour' ? 'yyyy-MM-dd HH:00:00' : 'yyyy-MM-dd');
  label = (ms: number, interval: Interval) => this.local(ms).setLocale('en-US').toFormat(interval === 'hour' ? 'd-MMM-yyyy HH:00' : 'd-MMM-yyyy');

  /** [from, to): from local midnight of date_from to the local midnight after date_to, in buckets of `interval`. */
  period(dateRange: DateRange, interval: Interval): Period {
    const from = this.midnight(dateRange.date_from);
    const to = this.add(this.midnight(dateRange.date_to), 'day', 1);
    return { from, to, buckets: this.buckets(from, to, interval) };
  }

  buckets(from: number, to: number, interval: Interval): number[] {
    const out: number[] = [];
    for (let b = this.start(from, interval); b < to; b = this.add(b, interval, 1)) out.push(b);
    return out;
  }
}

export interface DateRange {
  date_from: string;
  date_to: string;
}

interface Period {
  from: number;
  to: number;
  buckets: number[];
}

const inPeriod = (time: number, from: number, to: number) => time >= from && time < to;

/** ClickHouse's `quantile`: linear interpolation between the two nearest of the sorted values. */
function quantile(values: readonly number[], level: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.max(0, Math.min(sorted.length - 1, level * (sorted.length - 1)));
  const left = Math.floor(index);
  if (left + 1 === sorted.length) return sorted[left]!;
  return sorted[left]! * (left + 1 - index) + sorted[left + 1]! * (index - left);
}

const distinct = <T>(items: readonly T[]) => new Set(items).size;
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

// ---- Trends.

export type TrendsMath = 'total' | 'dau' | 'weekly_active' | 'monthly_active' | 'unique_session' | 'sum' | 'avg' | 'min' | 'max' | 'median' | 'p90' | 'p95' | 'p99' | 'unique_group';

export interface TrendsSeries {
  kind: 'EventsNode';
  event: string | null;
  math?: TrendsMath;
  math_property?: string;
  math_group_type_index?: number;
  properties?: PropertyFilter[];
}

export interface TrendsRequest {
  kind: 'TrendsQuery';
  series: TrendsSeries[];
  interval?: Interval;
  dateRange: DateRange;
  properties?: PropertyFilter[];
  breakdownFilter?: { breakdown: string; breakdown_type?: 'event' | 'person'; breakdown_limit?: number };
  compareFilter?: { compare: boolean };
  trendsFilter?: { formula?: string; display?: string };
}

/** The numbers of one trends result, the fields both sides are compared on. */
export interface TrendsLine {
  label: string;
  count: number;
  data: number[] | null;
  days: string[];
  labels?: string[];
  breakdown_value?: string;
  compare_label?: 'current' | 'previous';
  aggregated_value?: number;
}

export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
const ACTIVE_DAYS: Partial<Record<TrendsMath, number>> = { weekly_active: 7, monthly_active: 30 };
const QUANTILE: Partial<Record<TrendsMath, number>> = { median: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** A series' aggregate over some rows; an aggregate of no numbers is 0, as PostHog charts it. */
function aggregate(series: TrendsSeries, rows: readonly Row[]): number {
  const math = series.math ?? 'total';
  switch (math) {
    case 'total':
      return rows.length;
    case 'dau':
    case 'weekly_active':
    case 'monthly_active':
      return distinct(rows.map((r) => r.personId));
    case 'unique_session':
      return distinct(rows.map((r) => propertyValue(r.properties, '$session_id')));
    case 'unique_group':
      return distinct(rows.map((r) => r.group0));
    default: {
      const values = rows.map((r) => toFloat(propertyValue(r.properties, series.math_property!))).filter((v): v is number => v !== null);
      if (values.length === 0) return 0;
      if (math === 'sum') return sum(values);
      if (math === 'avg') return sum(values) / values.length;
      if (math === 'min') return Math.min(...values);
      if (math === 'max') return Math.max(...values);
      return quantile(values, QUANTILE[math]!);
    }
  }
}

/** The rows a series counts at all: its event, its and the query's filters, and what its math needs present. */
function seriesRows(rows: readonly Row[], series: TrendsSeries, queryFilters: PropertyFilter[] | undefined): Row[] {
  const math = series.math ?? 'total';
  return rows.filter(
    (r) =>
      (series.event === null || r.event === series.event) &&
      passes(series.properties, r) &&
      passes(queryFilters, r) &&
      (math !== 'unique_session' || propertyValue(r.properties, '$session_id') !== null) &&
      (math !== 'unique_group' || r.group0 !== ''),
  );
}

export function referenceTrends(world: World, request: TrendsRequest): TrendsLine[] {
  const calendar = new Calendar(world.timezone);
  const rows = rowsOf(world);
  const interval = request.interval ?? 'day';
  const totalValue = ['BoldNumber', 'ActionsPie', 'ActionsTable', 'ActionsBarValue', 'WorldMap'].includes(request.trendsFilter?.display ?? '');
  const breakdown = request.breakdownFilter;
  const breakdownOf = (r: Row): string => {
    const props = breakdown!.breakdown_type === 'person' ? (r.person?.properties ?? {}) : r.properties;
    return propertyValue(props, breakdown!.breakdown) ?? BREAKDOWN_NULL;
  };

  const current = calendar.period(request.dateRange, interval);
  const periods: [Period, 'current' | 'previous'][] = [[current, 'current']];
  if (request.compareFilter?.compare) {
    const from = calendar.add(current.from, interval, -current.buckets.length);
    periods.push([{ from, to: current.from, buckets: calendar.buckets(from, current.from, interval) }, 'previous']);
  }

  const lines: (TrendsLine & { order: number })[] = [];
  for (const [period, periodLabel] of periods) {
    for (const [order, series] of request.series.entries()) {
      const math = series.math ?? 'total';
      const activeDays = ACTIVE_DAYS[math];
      const candidates = seriesRows(rows, series, request.properties);
      // Active users of a bucket are those active in the `activeDays` local days ending on its last day;
      // over the whole range (a total value), those of its last `activeDays` days.
      const earliest = activeDays === undefined ? period.from : totalValue ? Math.max(period.from, calendar.add(period.to, 'day', -activeDays)) : calendar.add(period.from, 'day', -(activeDays - 1));
      const inRange = candidates.filter((r) => inPeriod(r.time, earliest, period.to));
      const valueOf = (group: readonly Row[], bucket: number): number => {
        if (activeDays === undefined) return aggregate(series, group.filter((r) => calendar.start(r.time, interval) === bucket));
        const lastDay = calendar.add(calendar.add(bucket, interval, 1), 'day', -1);
        const windowFrom = calendar.add(lastDay, 'day', -(activeDays - 1));
        return aggregate(series, group.filter((r) => inPeriod(r.time, windowFrom, calendar.add(lastDay, 'day', 1))));
      };
      const line = (group: readonly Row[]): TrendsLine => {
        const name = series.event ?? 'All events';
        if (totalValue) return { label: name, count: 0, data: [], days: [], aggregated_value: aggregate(series, group) };
        const data = period.buckets.map((b) => valueOf(group, b));
        return { label: name, count: sum(data), data, days: period.buckets.map((b) => calendar.day(b, interval)), labels: period.buckets.map((b) => calendar.label(b, interval)) };
      };
      const withCompare = (l: TrendsLine): TrendsLine => (request.compareFilter?.compare ? { ...l, compare_label: periodLabel } : l);

      if (!breakdown) {
        lines.push({ ...withCompare(line(inRange)), order });
        continue;
      }
      // The top values by the series' aggregate over the range (ties by value), the rest as "other".
      const limit = breakdown.breakdown_limit ?? 25;
      const byValue = new Map<string, Row[]>();
      for (const r of inRange) byValue.set(breakdownOf(r), [...(byValue.get(breakdownOf(r)) ?? []), r]);
      const ranked = [...byValue.entries()].map(([value, group]) => ({ value, total: aggregate(series, group) })).sort((a, b) => b.total - a.total || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
      const top = ranked.slice(0, limit).map((v) => v.value);
      const values = ranked.length > limit ? [...top, BREAKDOWN_OTHER] : top;
      const valueLines = values.map((value) => {
        const group = inRange.filter((r) => (value === BREAKDOWN_OTHER ? !top.includes(breakdownOf(r)) : breakdownOf(r) === value));
        const l = line(group);
        return withCompare({ ...l, label: request.series.length > 1 ? `${l.label} - ${value}` : value, breakdown_value: value });
      });
      // Biggest first, the null value and then "other" last; equal sizes keep the ranking's order.
      const rank = (l: TrendsLine) => (l.breakdown_value === BREAKDOWN_OTHER ? 2 : l.breakdown_value === BREAKDOWN_NULL ? 1 : 0);
      const size = (l: TrendsLine) => l.aggregated_value ?? l.count;
      valueLines.sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
      lines.push(...valueLines.map((l) => ({ ...l, order })));
    }
  }

  const formula = request.trendsFilter?.formula;
  if (!formula) return lines.map(({ order: _, ...l }) => l);
  return applyFormula(lines, formula, request.series.length, totalValue);
}

/** A formula such as `A/B*100` as a function of the series' values (letters A, B, ...), for the few the cases use. */
export const FORMULAS: Record<string, (v: Record<string, number>) => number> = {
  'A/B*100': (v) => (v.A! / v.B!) * 100,
  'A+B': (v) => v.A! + v.B!,
  'A-B': (v) => v.A! - v.B!,
  '(A+B)/2': (v) => (v.A! + v.B!) / 2,
};

/** The formula per bucket, per compared period and breakdown value; a non-finite result is 0. */
function applyFormula(lines: (TrendsLine & { order: number })[], formula: string, seriesCount: number, totalValue: boolean): TrendsLine[] {
  const f = FORMULAS[formula];
  if (!f) throw new Error(`the reference knows no formula ${formula}`);
  const evaluate = (values: Record<string, number>) => {
    const v = f(values);
    return Number.isFinite(v) ? v : 0;
  };
  const groups = new Map<string, (TrendsLine & { order: number })[]>();
  for (const l of lines) {
    const key = `${l.compare_label ?? ''}|${l.breakdown_value ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  return [...groups.values()].map((members) => {
    const { order: _, ...base } = members[0]!;
    const letters = (pick: (l: TrendsLine) => number) =>
      Object.fromEntries(Array.from({ length: seriesCount }, (_, i) => {
        const member = members.find((m) => m.order === i);
        return [String.fromCharCode(65 + i), member ? pick(member) : 0];
      }));
    const label = `Formula (${formula})`;
    if (totalValue) return { ...base, label, data: null, count: 0, aggregated_value: evaluate(letters((l) => l.aggregated_value ?? 0)) };
    const data = (base.data ?? []).map((_, i) => evaluate(letters((l) => l.data?.[i] ?? 0)));
    return { ...base, label, data, count: sum(data) };
  });
}

// ---- Funnels.

export interface FunnelStep {
  kind: 'EventsNode';
  event: string | null;
  properties?: PropertyFilter[];
}

export interface FunnelsRequest {
  kind: 'FunnelsQuery';
  series: FunnelStep[];
  dateRange: DateRange;
  properties?: PropertyFilter[];
  breakdownFilter?: { breakdown: string; breakdown_type?: 'event' | 'person'; breakdown_limit?: number };
  funnelsFilter?: {
    funnelOrderType?: 'ordered' | 'strict' | 'unordered';
    funnelWindowInterval?: number;
    funnelWindowIntervalUnit?: 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month';
    exclusions?: (FunnelStep & { funnelFromStep: number; funnelToStep: number })[];
  };
}

export interface FunnelStepLine {
  name: string;
  order: number;
  count: number;
  average_conversion_time: number | null;
  median_conversion_time: number | null;
  breakdown_value?: string[];
}

const WINDOW_SECONDS = { second: 1, minute: 60, hour: 3_600, day: 86_400, week: 604_800, month: 2_592_000 };

/** A person's way through the funnel: the steps reached (0 to n), their times, whether it was excluded. */
interface Path {
  steps: number;
  /** Epoch milliseconds of each reached step, and which events reached them. */
  times: number[];
  events: number[];
  excluded: boolean;
}

/** One event of a person's stream: the steps it is (1-based), and the exclusions it is (as -(step + 1)). */
interface StreamEvent {
  id: number;
  time: number;
  steps: number[];
  breakdown: string;
}

/**
 * PostHog's ordered and strict funnels as its `aggregate_funnel` UDF walks a person's events in
 * time order: each first-step event restarts step 1 (so a step's time counts from the latest
 * first-step event before it); an event of step k extends the latest path at step k-1 when within
 * the window of that path's start; the person's funnel is the first path to reach the furthest
 * step. An exclusion event inside a path's window marks that path, and a person whose furthest
 * path is marked is left out. Strict funnels drop every path an event does not extend.
 * `startValue` keeps only starts carrying that breakdown value (PostHog's step-0 attribution).
 */
function walkOrdered(events: readonly StreamEvent[], n: number, windowMs: number, strict: boolean, startValue?: string): Path | null {
  const none = (): Path & { start: number } => ({ start: 0, steps: 0, times: [], events: [], excluded: false });
  const entered = Array.from({ length: n + 1 }, none);
  let best = { step: 0, path: none() };
  const process = (e: StreamEvent, simultaneous: boolean) => {
    for (const s of [...e.steps].reverse()) {
      const step = Math.abs(s);
      const previous = entered[step - 1]!;
      const inWindow = previous.start !== 0 && e.time - previous.start <= windowMs;
      const alreadyReached = entered[step]!.start === previous.start && previous.start !== 0;
      if (!inWindow || alreadyReached) continue;
      if (s < 0) {
        if (previous.excluded) continue;
        previous.excluded = true;
        if (best.step === step - 1 && e.time - best.path.start <= windowMs) best.path.excluded = true;
        continue;
      }
      if (startValue !== undefined && step === 1 && e.breakdown !== startValue) continue;
      // Of events of one moment, one event reaches one step only.
      if (simultaneous && previous.events.includes(e.id)) continue;
      const path = { start: previous.start, steps: step, times: [...previous.times, e.time], events: [...previous.events, e.id], excluded: previous.excluded };
      if (!previous.excluded) entered[step] = path;
      if (step > best.step || (step === best.step && best.path.excluded)) best = { step, path: { ...path } };
    }
    if (strict && !simultaneous) for (let i = 1; i <= n; i++) if (!e.steps.includes(i)) entered[i] = none();
  };
  const byTime = new Map<number, StreamEvent[]>();
  for (const e of events) byTime.set(e.time, [...(byTime.get(e.time) ?? []), e]);
  for (const [time, group] of [...byTime.entries()].sort((a, b) => a[0] - b[0])) {
    entered[0] = { start: time, steps: 0, times: [], events: [], excluded: false };
    if (group.length === 1 || group.every((e) => e.steps.join() === group[0]!.steps.join())) group.forEach((e) => process(e, false));
    // Events of one moment: each of their steps in step order, exclusions ignored.
    else group.flatMap((e) => e.steps.filter((s) => s > 0).map((s) => ({ ...e, steps: [s] }))).sort((a, b) => a.steps[0]! - b.steps[0]!).forEach((e) => process(e, true));
    if (entered[n]!.start > 0) break;
  }
  return best.path.excluded ? null : { ...best.path, steps: best.step };
}

/**
 * Unordered funnels, as this project computes them (not checked against PostHog's UDF): from any
 * step's event, each step's first event from it within the window, the reached ones in time order;
 * the start reaching most steps wins, the earliest on a tie.
 */
function walkUnordered(events: readonly StreamEvent[], n: number, windowMs: number, startValue?: string): Path | null {
  let best: Path | null = null;
  events.forEach((e, start) => {
    if (!e.steps.some((s) => s > 0) || (startValue !== undefined && e.breakdown !== startValue)) return;
    const times = Array.from({ length: n }, (_, k) => events.find((x, i) => i >= start && x.steps.includes(k + 1) && x.time <= e.time + windowMs)?.time)
      .filter((t): t is number => t !== undefined)
      .sort((a, b) => a - b);
    if (!best || times.length > best.steps) best = { steps: times.length, times, events: [], excluded: false };
  });
  return best;
}

/**
 * PostHog's steps funnel by person, within the date range (see `walkOrdered`). Broken down, a
 * person counts once per value of their first-step events, each time walking only the starts with
 * that value; the values are the top ones by persons doing the first step, the rest "other".
 * A step's conversion times are those of the persons reaching it, zero times left out as PostHog's.
 */
export function referenceFunnels(world: World, request: FunnelsRequest): FunnelStepLine[] | FunnelStepLine[][] {
  const calendar = new Calendar(world.timezone);
  const period = calendar.period(request.dateRange, 'day');
  const steps = request.series;
  const n = steps.length;
  const order = request.funnelsFilter?.funnelOrderType ?? 'ordered';
  const exclusions = request.funnelsFilter?.exclusions ?? [];
  const windowMs = (request.funnelsFilter?.funnelWindowInterval ?? 14) * WINDOW_SECONDS[request.funnelsFilter?.funnelWindowIntervalUnit ?? 'day'] * 1000;
  const isStep = (step: FunnelStep, r: Row) => (step.event === null || r.event === step.event) && passes(step.properties, r);
  const rows = rowsOf(world).filter((r) => inPeriod(r.time, period.from, period.to) && passes(request.properties, r));

  const breakdown = request.breakdownFilter;
  const breakdownOf = (r: Row): string => {
    if (!breakdown) return '';
    const props = breakdown.breakdown_type === 'person' ? (r.person?.properties ?? {}) : r.properties;
    return propertyValue(props, breakdown.breakdown) ?? BREAKDOWN_NULL;
  };
  let mapValue = (v: string) => v;
  if (breakdown) {
    const limit = breakdown.breakdown_limit ?? 25;
    const personsByValue = new Map<string, Set<string>>();
    for (const r of rows.filter((r) => isStep(steps[0]!, r))) personsByValue.set(breakdownOf(r), (personsByValue.get(breakdownOf(r)) ?? new Set()).add(r.personId));
    const ranked = [...personsByValue.entries()].sort((a, b) => b[1].size - a[1].size || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([v]) => v);
    if (ranked.length === 0) return [];
    const top = ranked.slice(0, limit);
    if (ranked.length > limit) mapValue = (v) => (top.includes(v) ? v : BREAKDOWN_OTHER);
  }

  // Each person's stream: strict funnels see every event, the others only those of a step or an exclusion.
  const streams = new Map<string, StreamEvent[]>();
  for (const [id, r] of [...rows].sort((a, b) => a.time - b.time).entries()) {
    const stepNumbers = steps.flatMap((s, k) => (isStep(s, r) ? [k + 1] : []));
    const excludedSteps = order === 'unordered' || stepNumbers.length ? [] : [...new Set(exclusions.filter((x) => isStep(x, r)).flatMap((x) => Array.from({ length: x.funnelToStep - x.funnelFromStep }, (_, j) => -(x.funnelFromStep + j + 2))))];
    if (order !== 'strict' && stepNumbers.length === 0 && excludedSteps.length === 0) continue;
    streams.set(r.personId, [...(streams.get(r.personId) ?? []), { id, time: r.time, steps: [...stepNumbers, ...excludedSteps], breakdown: mapValue(breakdownOf(r)) }]);
  }

  const funnels: { breakdown: string; path: Path }[] = [];
  for (const events of streams.values()) {
    const walk = (value?: string) => (order === 'unordered' ? walkUnordered(events, n, windowMs, value) : walkOrdered(events, n, windowMs, order === 'strict', value));
    const values = breakdown ? [...new Set(events.filter((e) => e.steps.includes(1)).map((e) => e.breakdown))] : [undefined];
    for (const value of values) {
      const path = walk(value);
      if (path && path.steps > 0) funnels.push({ breakdown: value ?? '', path });
    }
  }

  const stepsOf = (paths: readonly Path[], value?: string): FunnelStepLine[] =>
    steps.map((step, k) => {
      const reaching = paths.filter((p) => p.steps > k);
      const times = reaching.map((p) => (p.times[k]! - p.times[k - 1]!) / 1000).filter((t) => t > 0);
      const line: FunnelStepLine = {
        name: step.event ?? 'All events',
        order: k,
        count: reaching.length,
        average_conversion_time: k === 0 || times.length === 0 ? null : sum(times) / times.length,
        median_conversion_time: k === 0 || times.length === 0 ? null : quantile(times, 0.5),
      };
      return value === undefined ? line : { ...line, breakdown_value: [value] };
    });

  if (!breakdown) return stepsOf(funnels.map((f) => f.path));
  const rank = (v: string) => (v === BREAKDOWN_OTHER ? 2 : v === BREAKDOWN_NULL ? 1 : 0);
  return [...new Set(funnels.map((f) => f.breakdown))]
    .map((v) => stepsOf(funnels.filter((f) => f.breakdown === v).map((f) => f.path), v))
    .sort((a, b) => {
      const [va, vb] = [a[0]!.breakdown_value![0]!, b[0]!.breakdown_value![0]!];
      return rank(va) - rank(vb) || b[0]!.count - a[0]!.count || va.localeCompare(vb);
    });
}

// ---- Retention.

export interface RetentionRequest {
  kind: 'RetentionQuery';
  retentionFilter: {
    targetEntity?: { id: string; type: 'events' };
    returningEntity?: { id: string; type: 'events' };
    retentionType: 'retention_first_time' | 'retention_recurring';
    totalIntervals: number;
    period: 'Day' | 'Week' | 'Month';
  };
  dateRange: { date_to: string };
  properties?: PropertyFilter[];
}

export interface RetentionLine {
  /** The cohort's first moment, epoch milliseconds (the response's `date`, read as a moment). */
  date: number;
  label: string;
  values: { count: number; label: string }[];
}

/**
 * One cohort per interval, the last `totalIntervals` up to date_to: the persons who did the target
 * event in it (recurring), or did it for the first time ever in it (first time); then, per later
 * interval, how many of them did the returning event in it. Interval 0 is the cohort's size.
 */
export function referenceRetention(world: World, request: RetentionRequest): RetentionLine[] {
  const calendar = new Calendar(world.timezone);
  const filter = request.retentionFilter;
  const interval = ({ Day: 'day', Week: 'week', Month: 'month' } as const)[filter.period];
  const total = filter.totalIntervals;
  const last = calendar.start(calendar.midnight(request.dateRange.date_to), interval);
  const cohortStarts = Array.from({ length: total }, (_, i) => calendar.add(last, interval, i - (total - 1)));
  const end = calendar.add(last, interval, 1);
  const indexOf = (time: number) => cohortStarts.indexOf(calendar.start(time, interval));
  const target = filter.targetEntity?.id ?? '$pageview';
  const returning = filter.returningEntity?.id ?? '$pageview';

  const rows = rowsOf(world).filter((r) => r.time < end && passes(request.properties, r));
  const persons = new Map<string, { starts: Set<number>; returns: Set<number> }>();
  const of = (id: string) => persons.get(id) ?? persons.set(id, { starts: new Set(), returns: new Set() }).get(id)!;
  for (const r of rows) {
    if (r.event === returning && indexOf(r.time) !== -1) of(r.personId).returns.add(indexOf(r.time));
    if (r.event === target && !filter.retentionType.endsWith('first_time') && indexOf(r.time) !== -1) of(r.personId).starts.add(indexOf(r.time));
  }
  if (filter.retentionType === 'retention_first_time') {
    const first = new Map<string, number>();
    for (const r of rows) if (r.event === target) first.set(r.personId, Math.min(first.get(r.personId) ?? Infinity, r.time));
    for (const [person, time] of first) if (indexOf(time) !== -1) of(person).starts.add(indexOf(time));
  }

  return cohortStarts.map((date, cohort) => ({
    date,
    label: `${filter.period} ${cohort}`,
    values: Array.from({ length: total - cohort }, (_, offset) => ({
      count: [...persons.values()].filter((p) => p.starts.has(cohort) && (offset === 0 || p.returns.has(cohort + offset))).length,
      label: `${filter.period} ${offset}`,
    })),
  }));
}

// ---- Lifecycle.

export interface LifecycleRequest {
  kind: 'LifecycleQuery';
  series: [{ kind: 'EventsNode'; event: string | null; properties?: PropertyFilter[] }];
  interval: 'day' | 'week' | 'month';
  dateRange: DateRange;
  properties?: PropertyFilter[];
}

export interface LifecycleLine {
  status: 'new' | 'returning' | 'resurrecting' | 'dormant';
  label: string;
  data: number[];
  count: number;
  days: string[];
  labels: string[];
}

/**
 * Per interval of the range, each person active in it is new (first active in the interval their
 * person was created in), returning (active the interval before too), or resurrecting; a person
 * active in one interval and not the next is dormant in the next (counted negative).
 */
export function referenceLifecycle(world: World, request: LifecycleRequest): LifecycleLine[] {
  const calendar = new Calendar(world.timezone);
  const { interval } = request;
  const period = calendar.period(request.dateRange, interval);
  const series = request.series[0];
  const first = period.buckets[0]!;
  const last = period.buckets.at(-1)!;
  // The interval before the range tells the status of the range's first interval.
  const rows = rowsOf(world).filter(
    (r) => (series.event === null || r.event === series.event) && passes(series.properties, r) && passes(request.properties, r) && inPeriod(r.time, calendar.add(first, interval, -1), calendar.add(last, interval, 1)),
  );
  const active = new Map<string, { created: number; intervals: Set<number> }>();
  for (const r of rows) {
    const person = active.get(r.personId) ?? { created: calendar.start(r.person?.createdAt ?? 0, interval), intervals: new Set<number>() };
    person.intervals.add(calendar.start(r.time, interval));
    active.set(r.personId, person);
  }
  const counts = new Map<string, number>();
  const count = (bucket: number, status: string) => counts.set(`${bucket}:${status}`, (counts.get(`${bucket}:${status}`) ?? 0) + 1);
  for (const { created, intervals } of active.values()) {
    const sorted = [...intervals].sort((a, b) => a - b);
    sorted.forEach((bucket, i) => {
      const previous = calendar.add(bucket, interval, -1);
      if (i === 0) count(bucket, created === bucket ? 'new' : 'resurrecting');
      else count(bucket, sorted[i - 1] === previous ? 'returning' : 'resurrecting');
      const next = calendar.add(bucket, interval, 1);
      if (!intervals.has(next)) count(next, 'dormant');
    });
  }
  const name = series.event ?? 'All events';
  return (['new', 'returning', 'resurrecting', 'dormant'] as const).map((status) => {
    const data = period.buckets.map((b) => (status === 'dormant' ? -1 : 1) * (counts.get(`${b}:${status}`) ?? 0)).map((v) => (v === 0 ? 0 : v));
    return { status, label: `${name} - ${status}`, data, count: sum(data), days: period.buckets.map((b) => calendar.day(b, interval)), labels: period.buckets.map((b) => calendar.label(b, interval)) };
  });
}

// ---- Stickiness.

export interface StickinessRequest {
  kind: 'StickinessQuery';
  series: { kind: 'EventsNode'; event: string | null; properties?: PropertyFilter[] }[];
  interval: Interval;
  dateRange: DateRange;
  properties?: PropertyFilter[];
}

export interface StickinessLine {
  label: string;
  count: number;
  data: number[];
  days: number[];
  labels: string[];
}

/** Per series, how many persons did the event in exactly 1, 2, ... N intervals of the range (N its number of intervals). */
export function referenceStickiness(world: World, request: StickinessRequest): StickinessLine[] {
  const calendar = new Calendar(world.timezone);
  const period = calendar.period(request.dateRange, request.interval);
  const all = rowsOf(world);
  return request.series.map((series) => {
    const intervals = new Map<string, Set<number>>();
    for (const r of all) {
      if ((series.event !== null && r.event !== series.event) || !passes(series.properties, r) || !passes(request.properties, r) || !inPeriod(r.time, period.from, period.to)) continue;
      intervals.set(r.personId, (intervals.get(r.personId) ?? new Set()).add(calendar.start(r.time, request.interval)));
    }
    const days = period.buckets.map((_, i) => i + 1);
    const data = days.map((d) => [...intervals.values()].filter((s) => s.size === d).length);
    return { label: series.event ?? 'All events', count: sum(data), data, days, labels: days.map((d) => `${d} ${request.interval}${d === 1 ? '' : 's'}`) };
  });
}
