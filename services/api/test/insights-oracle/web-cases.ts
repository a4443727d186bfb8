import type { Fixture } from './fixture.js';
import { mayFixture, type Props, type Spec } from './may-fixture.js';
import type { WebRequest } from './web-reference.js';

/**
 * The web analytics oracle's project and questions, shared by the run on ClickHouse 18.16 through
 * the endpoint (`web-analytics-oracle.integration.test.ts`) and on ClickHouse 26
 * (`web-analytics-oracle-chdb.test.ts`). The range is 8 to 14 May 2024 (UTC), the period before
 * 1 to 7 May.
 *
 * Sessions: ann's two (desktop direct, then her phone from Google, a bounce); ben's paid Google
 * visit and a two-second direct bounce; cat's Hacker News visit with a click (not a bounce); dev's
 * newsletter visit across midnight; eve's Facebook visit that starts before the range ends and
 * goes on after it; in the period before, fay's two and gus's Twitter visit running into the
 * range (it belongs to the period it started in). Not counted: a session without a pageview,
 * sessions before and after both periods, and a pageview without a session. The other project
 * has the same session ids and distinct ids, its values marked `leak`.
 */

const SITE = 'https://shop.test';
const DESKTOP = { $device_type: 'Desktop', $os: 'Mac OS X' };
const MOBILE = { $device_type: 'Mobile', $os: 'iOS' };
const page = (session: string, path: string, extra: Props = {}): Props => ({ $session_id: session, $current_url: `${SITE}${path}`, $pathname: path, $host: 'shop.test', ...extra });
const inSession = (session: string, extra: Props = {}): Props => ({ $session_id: session, ...extra });

const EVENTS: Spec[] = [
  ['2024-05-08 10:00:00', 'ann', '$pageview', page('s-ann-1', '/', { $referring_domain: '$direct', $browser: 'Chrome', $geoip_country_code: 'US', ...DESKTOP })],
  ['2024-05-08 10:01:00', 'ann', '$pageview', page('s-ann-1', '/pricing', { $referring_domain: '$direct', $browser: 'Chrome', $geoip_country_code: 'US', ...DESKTOP })],
  ['2024-05-08 10:02:00', 'ann', '$autocapture', inSession('s-ann-1')],
  ['2024-05-09 09:00:00', 'ann-phone', '$pageview', page('s-ann-2', '/product/1', { $referring_domain: 'www.google.com', $browser: 'Mobile Safari', $geoip_country_code: 'GB', ...MOBILE })],

  ['2024-05-10 12:00:00', 'ben', '$pageview', page('s-ben-1', '/', { $referring_domain: 'www.google.com', utm_source: 'google', utm_medium: 'cpc', utm_campaign: 'brand', gclid: 'g-1', $browser: 'Firefox', $geoip_country_code: 'DE', ...DESKTOP })],
  ['2024-05-10 12:00:05', 'ben', '$pageview', page('s-ben-1', '/checkout', { $referring_domain: 'www.google.com', $browser: 'Firefox', $geoip_country_code: 'DE', ...DESKTOP })],
  ['2024-05-10 12:00:06', 'ben', 'purchase', inSession('s-ben-1')],
  ['2024-05-13 10:00:00', 'ben', '$pageview', page('s-ben-3', '/pricing', { $referring_domain: '$direct', $browser: 'Firefox', ...DESKTOP })],
  ['2024-05-13 10:00:02', 'ben', 'signup', inSession('s-ben-3')],

  ['2024-05-11 08:00:00', 'cat', '$pageview', page('s-cat-1', '/blog', { $referring_domain: 'news.ycombinator.com', $browser: 'Chrome', $geoip_country_code: 'US', ...MOBILE })],
  ['2024-05-11 08:00:20', 'cat', '$autocapture', page('s-cat-1', '/blog')],

  ['2024-05-12 23:59:50', 'dev', '$pageview', page('s-dev-1', '/', { $referring_domain: '$direct', utm_source: 'newsletter', utm_medium: 'email', $browser: 'Safari', $geoip_country_code: 'FR', ...DESKTOP })],
  ['2024-05-13 00:00:20', 'dev', '$pageview', page('s-dev-1', '/pricing', { $referring_domain: '$direct', $browser: 'Safari', $geoip_country_code: 'FR', ...DESKTOP })],
  ['2024-05-12 13:00:00', 'dev', '$pageview', { $current_url: `${SITE}/no-session`, $pathname: '/no-session' }],

  ['2024-05-14 23:50:00', 'eve', '$pageview', page('s-eve-1', '/', { $referring_domain: 'l.facebook.com', $browser: 'Chrome', ...MOBILE })],
  ['2024-05-15 00:10:00', 'eve', '$pageview', page('s-eve-1', '/product/2', { $referring_domain: 'l.facebook.com', $browser: 'Chrome', ...MOBILE })],

  ['2024-05-13 15:00:00', 'gus', '$screen', inSession('s-gus-2', { $screen_name: 'Home' })],

  // The period before.
  ['2024-05-03 10:00:00', 'fay', '$pageview', page('s-fay-1', '/', { $referring_domain: '$direct', $browser: 'Chrome', ...DESKTOP })],
  ['2024-05-03 10:00:05', 'fay', 'signup', inSession('s-fay-1')],
  ['2024-05-05 11:00:00', 'fay', '$pageview', page('s-fay-2', '/pricing', { $referring_domain: 'www.google.com', $browser: 'Chrome', ...DESKTOP })],
  ['2024-05-05 11:03:00', 'fay', '$pageview', page('s-fay-2', '/checkout', { $referring_domain: 'www.google.com', $browser: 'Chrome', ...DESKTOP })],
  ['2024-05-07 23:59:00', 'gus', '$pageview', page('s-gus-1', '/', { $referring_domain: 't.co', $browser: 'Chrome', ...MOBILE })],
  ['2024-05-08 00:01:00', 'gus', '$pageview', page('s-gus-1', '/blog', { $referring_domain: 't.co', $browser: 'Chrome', ...MOBILE })],
  ['2024-05-02 09:00:00', 'ann', '$pageview', page('s-ann-0', '/pricing', { $referring_domain: 'www.bing.com', $browser: 'Chrome', ...DESKTOP })],

  // Outside both periods.
  ['2024-04-28 10:00:00', 'ben', '$pageview', page('s-ben-0', '/', { $referring_domain: '$direct' })],
  ['2024-05-16 10:00:00', 'ann', '$pageview', page('s-ann-3', '/', { $referring_domain: '$direct' })],
];

const leak = (session: string, extra: Props = {}): Props => ({ $session_id: session, $current_url: 'https://leak.test/secret', $pathname: '/leak', $referring_domain: 'leak.test', utm_source: 'leak', $browser: 'LeakBrowser', $device_type: 'LeakDevice', $geoip_country_code: 'LEAK', ...extra });
const OTHER_PROJECT: Spec[] = [
  ['2024-05-08 09:59:00', 'ann', '$pageview', leak('s-ann-1')],
  ['2024-05-08 10:30:00', 'ann', '$pageview', leak('s-ann-1', { $pathname: '/leak-2' })],
  ['2024-05-09 09:00:01', 'ann-phone', '$autocapture', leak('s-ann-2')],
  ['2024-05-10 11:59:00', 'mallory', '$pageview', leak('s-ben-1', { utm_medium: 'leak' })],
  ['2024-05-12 12:00:00', 'mallory', '$pageview', leak('s-leak')],
  ['2024-05-04 12:00:00', 'mallory', '$pageview', leak('s-leak-before')],
];

export const LEAK = /leak/i;

/** The fixture (or the other project's rows) with persons of its own. */
export const buildWebFixture = ({ other = false } = {}): Fixture => mayFixture(other ? OTHER_PROJECT : EVENTS);

const RANGE = { date_from: '2024-05-08', date_to: '2024-05-14' };
const compare = { compareFilter: { compare: true } };
const overview = (rest: Partial<WebRequest> = {}): WebRequest => ({ kind: 'WebOverviewQuery', dateRange: RANGE, ...rest });
const stats = (breakdownBy: string, rest: Partial<WebRequest> = {}): WebRequest => ({ kind: 'WebStatsTableQuery', dateRange: RANGE, breakdownBy, ...compare, ...rest });

export const WEB_CASES: [string, WebRequest][] = [
  ['overview, compared with the week before', overview(compare)],
  ['overview without comparing', overview()],
  ['overview of one day', overview({ dateRange: { date_from: '2024-05-08', date_to: '2024-05-08' }, ...compare })],
  ['overview of Chrome pageviews only', overview({ ...compare, properties: [{ key: '$browser', value: 'Chrome' }] })],
  ['overview of direct sessions (a session property)', overview({ ...compare, properties: [{ key: '$channel_type', type: 'session', value: 'Direct' }] })],
  ['stats by page of sessions entering on a path with "pricing"', stats('Page', { properties: [{ key: '$entry_pathname', type: 'session', operator: 'icontains', value: 'pricing' }] })],
  ['stats by channel of sessions not referred by Google, of Chrome pageviews', stats('InitialChannelType', { properties: [{ key: '$entry_referring_domain', type: 'session', operator: 'is_not', value: 'www.google.com' }, { key: '$browser', value: 'Chrome' }] })],
  ['overview of a range without sessions', overview({ dateRange: { date_from: '2024-06-01', date_to: '2024-06-07' }, ...compare })],
  ...['Page', 'InitialPage', 'ExitPage', 'InitialReferringDomain', 'InitialChannelType', 'InitialUTMSource', 'InitialUTMMedium', 'DeviceType', 'Browser', 'OS', 'Country'].map((b): [string, WebRequest] => [`stats by ${b}`, stats(b)]),
  ['stats by page, limited to 2', stats('Page', { limit: 2 })],
  ['stats by channel without comparing', stats('InitialChannelType', { compareFilter: { compare: false } })],
  ['stats by browser of mobile pageviews', stats('Browser', { properties: [{ key: '$device_type', value: 'Mobile' }] })],
];

/** Channels of the range's sessions, written out by hand: the reference classifies with the same rules as the SQL. */
export const EXPECTED_CHANNELS = ['Direct', 'Email', 'Organic Search', 'Organic Social', 'Paid Search', 'Referral'];
