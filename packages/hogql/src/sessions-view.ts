import { PropertyFilterError, propertyFilterProblem, type StoredPropertyFilter } from '@tributary/property-filters';
import type { Expr, SelectQuery } from './ast.js';
import { channelTypeExpr } from './channel-type.js';
import { and, call, compare, constant, field, jsonRawValue, or, propertyTest } from './property-value-expr.js';

/**
 * PostHog's `sessions` table, computed when read: the project's events grouped by `$session_id`.
 * A query naming `sessions` reads this select over `events`, so the tenant guard, deletions and
 * late events hold for sessions as for events, with no second copy to keep. (Measured against
 * a table kept at ingest in the sessions work's report; query time was chosen.)
 *
 * A session's entry is its first event with a `$current_url`, its exit the last; its channel is
 * read from the entry's UTM parameters, click ids and referring domain (`channel-type.ts`). It is a
 * bounce when it has at most one pageview or autocapture and lasted under 10 seconds.
 */

/** The entry event's properties a session keeps, by PostHog's column name. */
const ENTRY_PROPERTIES: [column: string, property: string][] = [
  ['$entry_current_url', '$current_url'],
  ['$entry_pathname', '$pathname'],
  ['$entry_hostname', '$host'],
  ['$entry_referring_domain', '$referring_domain'],
  ['$entry_referrer', '$referrer'],
  ['$entry_utm_source', 'utm_source'],
  ['$entry_utm_medium', 'utm_medium'],
  ['$entry_utm_campaign', 'utm_campaign'],
  ['$entry_utm_term', 'utm_term'],
  ['$entry_utm_content', 'utm_content'],
  ['$entry_gclid', 'gclid'],
  ['$entry_gad_source', 'gad_source'],
  ['$entry_fbclid', 'fbclid'],
];
const EXIT_PROPERTIES: [column: string, property: string][] = [
  ['$end_current_url', '$current_url'],
  ['$end_pathname', '$pathname'],
];

/** The name queries read the sessions by, as a table. */
export const SESSIONS_TABLE = 'sessions';

/** A session is engaged past this many seconds. */
export const BOUNCE_SECONDS = 10;

export const SESSIONS_COLUMNS = [
  'session_id', 'distinct_id', '$start_timestamp', '$end_timestamp', '$session_duration',
  ...ENTRY_PROPERTIES.map(([c]) => c), ...EXIT_PROPERTIES.map(([c]) => c),
  '$pageview_count', '$autocapture_count', '$screen_count', '$is_bounce', '$channel_type',
];

export interface SessionsQueryOptions {
  /** Which events make the sessions (a time window, property filters); every event of the project by default. */
  where?: Expr;
  /** Columns of the session's own, each an aggregate over its events, added after the table's. */
  extra?: [name: string, aggregate: Expr][];
}

const alias = (name: string, expr: Expr): Expr => ({ node: 'Alias', alias: name, expr });
const url = field('properties', '$current_url');
/** A property of a session's entry or exit properties, read as a property of events is: absent, empty and JSON null alike null. */
const propertyOf = (column: string, key: string): Expr => jsonRawValue(call('visitParamExtractRaw', field(column), constant(key)));
const eventIs = (name: string): Expr => compare('==', field('event'), constant(name));

/** The sessions select: the table `sessions` names, and what the web analytics queries read sessions from. */
export function sessionsQuery(options: SessionsQueryOptions = {}): SelectQuery {
  const hasUrl = call('isNotNull', url);
  const perSession: SelectQuery = {
    node: 'SelectQuery',
    select: [
      alias('session_id', field('$session_id')),
      // Named apart from the events' columns (here and the extra ones): a filter in this select's WHERE reading the column would read the aggregate.
      alias('first_distinct_id', call('argMin', field('distinct_id'), field('timestamp'))),
      alias('first_timestamp', call('min', field('timestamp'))),
      alias('last_timestamp', call('max', field('timestamp'))),
      // The entry's and exit's whole properties, read apart once per session: reading each property of every event measured several times slower.
      alias('entry', call('argMinIf', field('properties'), field('timestamp'), hasUrl)),
      alias('exit', call('argMaxIf', field('properties'), field('timestamp'), hasUrl)),
      alias('pageviews', call('countIf', eventIs('$pageview'))),
      alias('autocaptures', call('countIf', eventIs('$autocapture'))),
      alias('screens', call('countIf', eventIs('$screen'))),
      ...(options.extra ?? []).map(([name, expr]) => alias(`extra_${name}`, expr)),
    ],
    select_from: { node: 'JoinExpr', table: { node: 'Field', chain: ['events'] } },
    where: and([compare('!=', field('$session_id'), constant('')), ...(options.where ? [options.where] : [])]),
    group_by: [field('session_id')],
  };
  const entry = (column: string): Expr => propertyOf('entry', ENTRY_PROPERTIES.find(([c]) => c === column)![1]);
  const duration = call('dateDiff', constant('second'), field('first_timestamp'), field('last_timestamp'));
  const engaged = or([compare('>', call('plus', field('pageviews'), field('autocaptures')), constant(1)), compare('>=', duration, constant(BOUNCE_SECONDS))]);
  return {
    node: 'SelectQuery',
    select: [
      field('session_id'),
      alias('distinct_id', field('first_distinct_id')),
      alias('$start_timestamp', field('first_timestamp')),
      alias('$end_timestamp', field('last_timestamp')),
      alias('$session_duration', duration),
      ...ENTRY_PROPERTIES.map(([column]) => alias(column, entry(column))),
      ...EXIT_PROPERTIES.map(([column, property]) => alias(column, propertyOf('exit', property))),
      alias('$pageview_count', field('pageviews')),
      alias('$autocapture_count', field('autocaptures')),
      alias('$screen_count', field('screens')),
      alias('$is_bounce', call('if', engaged, constant(0), constant(1))),
      alias('$channel_type', channelTypeExpr({
        utmSource: entry('$entry_utm_source'),
        utmMedium: entry('$entry_utm_medium'),
        utmCampaign: entry('$entry_utm_campaign'),
        referringDomain: entry('$entry_referring_domain'),
        gclid: entry('$entry_gclid'),
        gadSource: entry('$entry_gad_source'),
        fbclid: entry('$entry_fbclid'),
      })),
      ...(options.extra ?? []).map(([name]) => alias(name, field(`extra_${name}`))),
    ],
    select_from: { node: 'JoinExpr', table: perSession },
  };
}

/**
 * A property filter on a session (`type: 'session'`, as PostHog's web analytics filters `$channel_type`
 * or `$entry_pathname`) as a condition over the sessions select's columns; a key that is no session
 * column, or an operator or value the filter does not take, is refused by name.
 */
export function sessionPropertyExpr(filter: StoredPropertyFilter, at: string, now: Date): Expr {
  if (!SESSIONS_COLUMNS.includes(filter.key)) throw new PropertyFilterError(`${at}: ${JSON.stringify(filter.key)} is not a session property; use one of ${SESSIONS_COLUMNS.join(', ')}`);
  const problem = propertyFilterProblem({ ...filter, type: 'event' }, at, { types: ['event'], now });
  if (problem) throw new PropertyFilterError(problem.detail);
  const text = call('toString', field(filter.key));
  return propertyTest(call('isNotNull', field(filter.key)), text, text, filter, now);
}
