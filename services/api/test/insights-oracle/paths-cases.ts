import type { Fixture } from './fixture.js';
import { mayFixture, type Props, type Spec } from './may-fixture.js';
import { referencePaths, type PathsEdgeLine, type PathsRequest } from './paths-reference.js';

/**
 * The paths oracle's project and questions, shared by the run on ClickHouse 18.16 through the
 * endpoint (`paths-oracle.integration.test.ts`) and on ClickHouse 26 (`paths-oracle-chdb.test.ts`).
 *
 * Who is who (May 2024, UTC): ann browses on two devices (`ann`, `ann-phone`, one person) in two
 * sessions exactly 30 minutes apart; ben's steps are 29:59 apart (one session), two of them in the
 * same second, and his last pageview has no URL; cat uses the app ($screen, one without a name);
 * dev takes a long way round; eve and fay are short; gus has a single pageview. Events before and
 * after the range, and the other project's (same distinct ids, `leak.test` URLs), must never count.
 */

const SITE = 'https://shop.test';

const page = (path: string, extra: Props = {}): Props => ({ $current_url: `${SITE}${path}`, $pathname: path.replace(/\?.*$/, ''), ...extra });
const screen = (name?: string): Props => (name === undefined ? {} : { $screen_name: name });

const EVENTS: Spec[] = [
  ['2024-05-06 10:00:00', 'ann', '$pageview', page('/', { $browser: 'Chrome' })],
  ['2024-05-06 10:01:00', 'ann', '$pageview', page('/pricing/', { $browser: 'Chrome' })],
  ['2024-05-06 10:01:30', 'ann', '$pageview', page('/pricing', { $browser: 'Chrome' })],
  ['2024-05-06 10:03:00', 'ann-phone', 'signup'],
  ['2024-05-06 10:04:00', 'ann', '$pageview', page('/product/1?ref=mail', { $browser: 'Chrome' })],
  ['2024-05-06 10:05:00', 'ann', '$autocapture'],
  ['2024-05-06 10:06:00', 'ann', '$pageview', page('/checkout', { $browser: 'Chrome' })],
  ['2024-05-06 10:36:00', 'ann-phone', '$pageview', page('/', { $browser: 'Safari' })],
  ['2024-05-06 10:40:00', 'ann-phone', '$pageview', page('/product/2', { $browser: 'Safari' })],
  ['2024-05-06 10:41:00', 'ann-phone', 'purchase'],

  ['2024-05-06 09:00:00', 'ben', '$pageview', page('/', { $browser: 'Firefox' })],
  ['2024-05-06 09:02:00', 'ben', '$pageview', page('/pricing')],
  ['2024-05-06 09:31:59', 'ben', '$pageview', page('/product/1')],
  ['2024-05-06 09:32:00', 'ben', '$pageview', page('/checkout')],
  ['2024-05-06 09:32:00', 'ben', 'signup'],
  ['2024-05-06 09:40:00', 'ben', '$pageview'],

  ['2024-05-07 08:00:00', 'cat', '$screen', screen('Home')],
  ['2024-05-07 08:01:00', 'cat', '$screen', screen('Cart')],
  ['2024-05-07 08:02:00', 'cat', '$screen', screen()],
  ['2024-05-07 08:03:00', 'cat', '$screen', screen('Cart')],
  ['2024-05-07 08:04:00', 'cat', '$screen', screen('Checkout')],
  ['2024-05-07 08:05:00', 'cat', 'add_to_cart'],
  ['2024-05-07 08:06:00', 'cat', 'purchase'],

  ['2024-05-07 12:00:00', 'dev', '$pageview', page('/')],
  ['2024-05-07 12:01:00', 'dev', '$pageview', page('/pricing')],
  ['2024-05-07 12:02:00', 'dev', '$pageview', page('/product/3')],
  ['2024-05-07 12:03:00', 'dev', '$pageview', page('/product/1')],
  ['2024-05-07 12:04:00', 'dev', '$pageview', page('/checkout')],
  ['2024-05-07 12:05:00', 'dev', '$pageview', page('/thanks')],
  ['2024-05-07 12:06:00', 'dev', '$pageview', page('/')],
  ['2024-05-07 12:07:30', 'dev', '$pageview', page('/pricing')],

  ['2024-05-08 15:00:00', 'eve', '$pageview', page('/', { $browser: 'Chrome' })],
  ['2024-05-08 15:00:30', 'eve', '$pageview', page('/product/2/', { $browser: 'Chrome' })],
  ['2024-05-08 15:01:00', 'eve', 'signup'],
  ['2024-05-08 15:02:00', 'eve', '$pageview', page('/checkout', { $browser: 'Chrome' })],

  ['2024-05-08 17:00:00', 'fay', '$pageview', page('/pricing')],
  ['2024-05-08 17:01:00', 'fay', '$pageview', page('/')],
  ['2024-05-08 17:02:00', 'fay', '$pageview', page('/pricing')],
  ['2024-05-08 17:03:00', 'fay', '$pageview', page('/checkout')],
  ['2024-05-08 17:03:00', 'fay', 'signup'],

  ['2024-05-09 11:00:00', 'gus', '$pageview', page('/')],
  // Outside the range.
  ['2024-04-30 23:59:59', 'fay', '$pageview', page('/')],
  ['2024-05-11 00:00:00', 'gus', '$pageview', page('/pricing')],
];

const OTHER_PROJECT: Spec[] = [
  ['2024-05-06 10:00:30', 'ann', '$pageview', { $current_url: 'https://leak.test/secret', $pathname: '/leak' }],
  ['2024-05-06 10:02:00', 'ann', '$pageview', { $current_url: 'https://leak.test/secret-2', $pathname: '/leak-2' }],
  ['2024-05-06 09:01:00', 'ben', 'leak_event'],
  ['2024-05-06 09:03:00', 'ben', '$screen', { $screen_name: 'Leak' }],
  ['2024-05-07 12:00:30', 'mallory', '$pageview', { $current_url: 'https://leak.test/', $pathname: '/leak' }],
  ['2024-05-07 12:01:30', 'mallory', '$pageview', { $current_url: 'https://leak.test/x', $pathname: '/leak-x' }],
];

/** The fixture (or the other project's rows) with persons of its own. */
export const buildPathsFixture = ({ other = false } = {}): Fixture => mayFixture(other ? OTHER_PROJECT : EVENTS);

const MAY = { date_from: '2024-05-01', date_to: '2024-05-10' };
const paths = (pathsFilter: PathsRequest['pathsFilter'], rest: Partial<PathsRequest> = {}): PathsRequest => ({ kind: 'PathsQuery', dateRange: MAY, pathsFilter, ...rest });
const pageviews = { includeEventTypes: ['$pageview' as const] };

export const PATHS_CASES: [string, PathsRequest][] = [
  ['pageviews by $current_url, a trailing slash dropped, repeats collapsed, sessions cut at 30 minutes', paths(pageviews)],
  ['screens by $screen_name, an unnamed one as an empty step', paths({ includeEventTypes: ['$screen'] })],
  ['custom events by name', paths({ includeEventTypes: ['custom_event'] })],
  ['every event when no type is asked for', paths({})],
  ['pageviews and custom events', paths({ includeEventTypes: ['$pageview', 'custom_event'] })],
  ['a start point, given with a trailing slash', paths({ ...pageviews, startPoint: `${SITE}/pricing/` })],
  ['an end point: the steps before it', paths({ ...pageviews, endPoint: `${SITE}/checkout` })],
  ['a start and an end point, a longer path kept to its ends around ...', paths({ ...pageviews, startPoint: `${SITE}/`, endPoint: `${SITE}/checkout`, stepLimit: 4 })],
  ['an end point with a short step limit: its last steps', paths({ ...pageviews, endPoint: `${SITE}/checkout`, stepLimit: 2 })],
  ['a step limit of 3', paths({ ...pageviews, stepLimit: 3 })],
  ['the longest step limit', paths({}, { dateRange: { date_from: '2024-05-07', date_to: '2024-05-07' }, pathsFilter: { stepLimit: 20 } })],
  ['an excluded page: the steps around it meet', paths({ ...pageviews, excludeEvents: [`${SITE}/pricing`] })],
  ['excluded events by name, with every event', paths({ excludeEvents: ['signup', '$autocapture'] })],
  ['$pageview excluded with every event: pageviews are named, then left out', paths({ excludeEvents: ['$pageview'] })],
  ['path cleaning rules, in order', paths({ ...pageviews, localPathCleaningFilters: [{ regex: '\\?.*$', alias: '' }, { regex: '/product/\\d+', alias: '/product/:id' }] })],
  ['path groupings: the first matching wildcard names the step', paths({ ...pageviews, pathGroupings: [`${SITE}/product/*`, `${SITE}/p*`] })],
  ['a minimum edge weight', paths({ ...pageviews, minEdgeWeight: 2 })],
  ['a maximum edge weight: edges no first step leads to are left out', paths({ ...pageviews, maxEdgeWeight: 1 })],
  ['an edge limit', paths({ ...pageviews, edgeLimit: 3 })],
  ['a HogQL expression names the steps ($pathname)', paths({ includeEventTypes: ['hogql'], pathsHogQLExpression: 'properties.$pathname' })],
  ['a property filter and a shorter date range', paths(pageviews, { dateRange: { date_from: '2024-05-06', date_to: '2024-05-08' }, properties: [{ key: '$browser', value: 'Chrome' }] })],
];

export const expectedPaths = (fixture: Fixture, request: PathsRequest): PathsEdgeLine[] => referencePaths(fixture.world, request);

/** Every step the other project's rows hold: none may appear in an answer. */
export const LEAK = /leak/i;
