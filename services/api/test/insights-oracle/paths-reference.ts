import { DateTime } from 'luxon';
import { passes, propertyValue, rowsOf, type PropertyFilter, type Row, type World } from './reference.js';

/**
 * PostHog's paths computed the slow, obvious way from the raw rows, one rule at a time, sharing no
 * code with `src/query`: each person's steps in time order, cut into sessions at 30 minutes
 * without a step, repeats collapsed, cut at the start and end points, limited, and every pair of
 * consecutive steps counted as an edge.
 */

export interface PathsRequest {
  kind: 'PathsQuery';
  dateRange: { date_from: string; date_to: string };
  properties?: PropertyFilter[];
  pathsFilter: {
    includeEventTypes?: ('$pageview' | '$screen' | 'custom_event' | 'hogql')[];
    /** The reference reads one expression only: a property, `properties.<key>`. */
    pathsHogQLExpression?: string;
    startPoint?: string;
    endPoint?: string;
    stepLimit?: number;
    pathGroupings?: string[];
    excludeEvents?: string[];
    localPathCleaningFilters?: { regex: string; alias: string }[];
    edgeLimit?: number;
    minEdgeWeight?: number;
    maxEdgeWeight?: number;
  };
}

export interface PathsEdgeLine {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

const SESSION_GAP_MS = 30 * 60 * 1000;

/** What a step is called before cleaning. */
function stepName(row: Row, filter: PathsRequest['pathsFilter']): string {
  const types = filter.includeEventTypes ?? [];
  const excluded = filter.excludeEvents ?? [];
  const reads = (type: string) => (types.length === 0 ? !excluded.includes(type) : types.includes(type as never));
  if (row.event === '$screen' && reads('$screen')) return propertyValue(row.properties, '$screen_name') ?? '';
  if (row.event === '$pageview' && reads('$pageview')) {
    const url = propertyValue(row.properties, '$current_url') ?? '';
    return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  }
  if (filter.pathsHogQLExpression && (types.length === 0 || types.includes('hogql'))) {
    const key = /^properties\.(.+)$/.exec(filter.pathsHogQLExpression)![1]!;
    return propertyValue(row.properties, key) ?? '';
  }
  return row.event;
}

function isIncluded(row: Row, filter: PathsRequest['pathsFilter']): boolean {
  const types = filter.includeEventTypes ?? [];
  if (types.length === 0 || (types.length === 1 && types[0] === 'hogql')) return true;
  return (types.includes('$pageview') && row.event === '$pageview') || (types.includes('$screen') && row.event === '$screen') || (types.includes('custom_event') && !row.event.startsWith('$'));
}

function cleaned(name: string, filter: PathsRequest['pathsFilter']): string {
  let out = name;
  for (const rule of filter.localPathCleaningFilters ?? []) out = out.replace(new RegExp(rule.regex, 'g'), () => rule.alias);
  for (const grouping of filter.pathGroupings ?? []) {
    const pattern = new RegExp(grouping.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')).join('.*'));
    if (pattern.test(out)) return grouping;
  }
  return out;
}

export function referencePaths(world: World, request: PathsRequest): PathsEdgeLine[] {
  const filter = request.pathsFilter;
  const from = DateTime.fromISO(request.dateRange.date_from, { zone: world.timezone }).toMillis();
  const to = DateTime.fromISO(request.dateRange.date_to, { zone: world.timezone }).plus({ days: 1 }).toMillis();
  const byPerson = new Map<string, { time: number; name: string }[]>();
  for (const row of rowsOf(world)) {
    if (row.time < from || row.time >= to || !isIncluded(row, filter) || !passes(request.properties, row)) continue;
    const name = cleaned(stepName(row, filter), filter);
    if ((filter.excludeEvents ?? []).includes(name)) continue;
    byPerson.set(row.personId, [...(byPerson.get(row.personId) ?? []), { time: row.time, name }]);
  }

  const edges = new Map<string, { source: string; target: string; gaps: number[] }>();
  for (const steps of byPerson.values()) {
    steps.sort((a, b) => a.time - b.time || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sessions: (typeof steps)[] = [];
    steps.forEach((step, i) => {
      if (i === 0 || step.time - steps[i - 1]!.time >= SESSION_GAP_MS) sessions.push([]);
      sessions.at(-1)!.push(step);
    });
    for (const session of sessions) {
      // A step followed by the same step is the same visit: the later one stands. The last is compared with '' (PostHog's), so an unnamed last step goes too.
      const compact = session.filter((step, i) => step.name !== (session[i + 1]?.name ?? ''));
      const path = cut(compact, filter);
      if (path === null) continue;
      for (let i = 1; i < path.length; i++) {
        const source = `${i}_${path[i - 1]!.name}`;
        const target = `${i + 1}_${path[i]!.name}`;
        const edge = edges.get(`${source}\n${target}`) ?? { source, target, gaps: [] };
        edge.gaps.push((path[i]!.time - path[i - 1]!.time) / 1000);
        edges.set(`${source}\n${target}`, edge);
      }
    }
  }

  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const counted = [...edges.values()]
    .map((e) => ({ source: e.source, target: e.target, value: e.gaps.length, average: e.gaps.reduce((a, b) => a + b, 0) / e.gaps.length }))
    .filter((e) => (!filter.minEdgeWeight || e.value >= filter.minEdgeWeight) && (!filter.maxEdgeWeight || e.value <= filter.maxEdgeWeight))
    .sort((a, b) => b.value - a.value || text(a.source, b.source) || text(a.target, b.target))
    .slice(0, filter.edgeLimit ?? 50);

  // Only edges a first step leads to, through the edges kept.
  const reached = new Set<string>();
  let frontier = counted.filter((e) => e.source.startsWith('1_')).map((e) => e.source);
  while (frontier.length > 0) {
    frontier.forEach((node) => reached.add(node));
    frontier = counted.filter((e) => reached.has(e.source) && !reached.has(e.target)).map((e) => e.target);
  }
  return counted.filter((e) => reached.has(e.source)).map((e) => ({ source: e.source, target: e.target, value: e.value, average_conversion_time: e.average * 1000 }));
}

type Step = { time: number; name: string };

/** The session's path from its start point, to its end point, in at most `stepLimit` steps; null when it does not pass them. */
function cut(steps: Step[], filter: PathsRequest['pathsFilter']): Step[] | null {
  const limit = filter.stepLimit ?? 5;
  const point = (p: string | undefined) => (p && p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);
  const start = point(filter.startPoint);
  const end = point(filter.endPoint);
  let path = steps;
  if (start) {
    const at = path.findIndex((s) => s.name === start);
    if (at < 0) return null;
    path = path.slice(at);
  }
  if (end) {
    const at = path.findIndex((s) => s.name === end);
    if (at < 0) return null;
    path = path.slice(0, at + 1);
  }
  if (start && end) {
    if (path.length <= limit) return path;
    const half = Math.floor(limit / 2);
    return [...path.slice(0, half), { time: path[half]!.time, name: '...' }, ...path.slice(path.length - half)];
  }
  return end ? path.slice(-limit) : path.slice(0, limit);
}
