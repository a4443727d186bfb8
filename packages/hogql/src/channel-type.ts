import type { Expr } from './ast.js';
import { and, call, compare, constant, not, or } from './property-value-expr.js';

/**
 * PostHog's default channel types (GA4's channel grouping with PostHog's additions), from a
 * session's entry UTM parameters, click ids and referring domain. One set of rules gives both the
 * HogQL expression the `sessions` table prints (`channelTypeExpr`) and a plain classifier
 * (`classifyChannel`), so tests can hold the SQL to the rules.
 */
export const CHANNEL_TYPES = [
  'Cross Network', 'Paid Search', 'Paid Social', 'Paid Video', 'Paid Shopping', 'Paid Unknown', 'Display', 'Direct',
  'Organic Search', 'Organic Social', 'Organic Video', 'Organic Shopping', 'Push', 'SMS', 'Audio', 'Email', 'Referral', 'Affiliate', 'Unknown',
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

type SourceCategory = 'Search' | 'Social' | 'Video' | 'Shopping';

/**
 * Sites by category, matched as a `utm_source` or as a referring domain: the site's name alone
 * (`google`), or a host of it (`www.google.co.uk`, `l.facebook.com`). The order decides a name in two lists.
 */
const SITES: [SourceCategory, string[]][] = [
  ['Search', ['google', 'bing', 'duckduckgo', 'yahoo', 'baidu', 'yandex', 'ecosia', 'brave', 'startpage', 'qwant', 'naver', 'seznam', 'ask', 'aol', 'kagi']],
  ['Social', ['facebook', 'fb', 'instagram', 'twitter', 'x', 't', 'linkedin', 'lnkd', 'reddit', 'pinterest', 'tiktok', 'snapchat', 'threads', 'mastodon', 'discord', 'tumblr', 'quora', 'whatsapp', 'telegram', 'vk', 'weibo', 'messenger', 'bsky']],
  ['Video', ['youtube', 'youtu', 'vimeo', 'twitch', 'dailymotion', 'wistia']],
  ['Shopping', ['amazon', 'ebay', 'etsy', 'shopify', 'walmart', 'aliexpress', 'alibaba']],
];

/** A site's pattern: its name, with any subdomain before it and up to three short labels after it (`.co.uk`). */
export const sitePattern = (names: readonly string[]): string => `^([a-z0-9-]+\\.)*(${names.join('|')})(\\.[a-z]{2,3}){0,3}$`;

/** Channels a `utm_medium` names outright, when the visit is paid and when it is not. */
const MEDIUMS: { mediums: string[]; paid: ChannelType | null; organic: ChannelType | null }[] = [
  { mediums: ['email', 'e-mail', 'e_mail', 'e mail', 'newsletter'], paid: 'Email', organic: 'Email' },
  { mediums: ['affiliate', 'affiliates'], paid: 'Affiliate', organic: 'Affiliate' },
  { mediums: ['social', 'social-network', 'social-media', 'sm', 'social network', 'social media'], paid: 'Paid Social', organic: 'Organic Social' },
  { mediums: ['display', 'banner', 'expandable', 'interstitial'], paid: 'Display', organic: 'Display' },
  { mediums: ['audio'], paid: 'Audio', organic: 'Audio' },
  { mediums: ['sms'], paid: 'SMS', organic: 'SMS' },
  { mediums: ['push', 'mobile', 'notification'], paid: null, organic: 'Push' },
  { mediums: ['referral', 'app', 'link'], paid: null, organic: 'Referral' },
];

/** A medium that makes the visit paid: these, or any medium starting with `paid`. */
const PAID_MEDIUMS = ['cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting'];
const DIRECT_SOURCES = ['(direct)', 'direct', '$direct'];
const CROSS_NETWORK = 'cross-network';
const SHOPPING_CAMPAIGN = '^(.*(([^a-df-z]|^)shop|shopping).*)$';
const VIDEO_CAMPAIGN = '^(.*video.*)$';
const PUSH_MEDIUM = 'push$';

/** What a session's channel is read from, as its entry event had them; each null when absent. */
export interface ChannelInputs {
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  referringDomain: string | null;
  gclid: string | null;
  gadSource: string | null;
  fbclid: string | null;
}

// ---- The plain classifier.

/** Empty and the text `null` are absent, as PostHog reads them. */
const present = (value: string | null): string | null => (value === null || value === '' || value === 'null' ? null : value);
const lowered = (value: string | null): string | null => present(value)?.toLowerCase() ?? null;
const siteRegexes = SITES.map(([category, names]) => [category, new RegExp(sitePattern(names))] as const);

function siteCategory(value: string | null): SourceCategory | null {
  if (value === null) return null;
  return siteRegexes.find(([, regex]) => regex.test(value))?.[0] ?? null;
}
const siteType = (value: string | null, kind: 'Paid' | 'Organic'): ChannelType | null => {
  const category = siteCategory(value);
  return category ? (`${kind} ${category}` as ChannelType) : null;
};
const mediumType = (medium: string | null, kind: 'paid' | 'organic'): ChannelType | null => (medium === null ? null : (MEDIUMS.find((m) => m.mediums.includes(medium))?.[kind] ?? null));

/** The channel of a session, by PostHog's default rules. */
export function classifyChannel(inputs: ChannelInputs): ChannelType {
  const source = lowered(inputs.utmSource);
  const medium = lowered(inputs.utmMedium);
  const campaign = lowered(inputs.utmCampaign);
  const domain = inputs.referringDomain;
  const gadSource = present(inputs.gadSource);
  const hasFbclid = present(inputs.fbclid) !== null;
  const matches = (value: string | null, pattern: string) => value !== null && new RegExp(pattern).test(value);
  if (campaign?.includes(CROSS_NETWORK)) return 'Cross Network';
  if ((medium !== null && (PAID_MEDIUMS.includes(medium) || medium.startsWith('paid'))) || present(inputs.gclid) !== null || gadSource !== null) {
    return siteType(source, 'Paid') ?? (matches(campaign, SHOPPING_CAMPAIGN) ? 'Paid Shopping' : null) ?? mediumType(medium, 'paid') ?? siteType(domain, 'Paid')
      ?? (gadSource === '1' ? 'Paid Search' : matches(campaign, VIDEO_CAMPAIGN) ? 'Paid Video' : hasFbclid ? 'Paid Social' : 'Paid Unknown');
  }
  if (domain === '$direct' && medium === null && (source === null || DIRECT_SOURCES.includes(source)) && !hasFbclid) return 'Direct';
  return siteType(source, 'Organic') ?? (matches(campaign, SHOPPING_CAMPAIGN) ? 'Organic Shopping' : null) ?? mediumType(medium, 'organic') ?? siteType(domain, 'Organic')
    ?? (matches(campaign, VIDEO_CAMPAIGN) ? 'Organic Video' : matches(medium, PUSH_MEDIUM) ? 'Push' : hasFbclid ? 'Organic Social' : domain === '$direct' ? 'Direct' : domain !== null ? 'Referral' : 'Unknown');
}

// ---- The same rules as a HogQL expression.

const NULL: Expr = { node: 'Constant', value: null };
const tuple = (values: readonly string[]): Expr => ({ node: 'Tuple', exprs: values.map(constant) });
const presentExpr = (value: Expr): Expr => call('nullIf', call('nullIf', value, constant('')), constant('null'));
/** A test of a nullable value that is false, not null, when the value is absent: multiIf and coalesce read it so. */
const test = (value: Expr, condition: (v: Expr) => Expr): Expr => call('ifNull', condition(value), constant(0));
const matchExpr = (value: Expr, pattern: string): Expr => test(value, (v) => call('match', v, constant(pattern)));
const isNull = (value: Expr): Expr => call('isNull', value);
const isIn = (value: Expr, values: readonly string[]): Expr => test(value, (v) => compare('in', v, tuple(values)));
const lookup = (cases: [Expr, string][]): Expr => call('multiIf', ...cases.flatMap(([c, v]) => [c, constant(v)]), NULL);

const siteTypeExpr = (value: Expr, kind: 'Paid' | 'Organic'): Expr => lookup(SITES.map(([category, names]) => [matchExpr(value, sitePattern(names)), `${kind} ${category}`]));
const mediumTypeExpr = (medium: Expr, kind: 'paid' | 'organic'): Expr =>
  lookup(MEDIUMS.filter((m) => m[kind] !== null).map((m) => [isIn(medium, m.mediums), m[kind]!]));

/** `classifyChannel` over HogQL expressions of its inputs (each a nullable string). */
export function channelTypeExpr(inputs: Record<keyof ChannelInputs, Expr>): Expr {
  const source = call('lower', presentExpr(inputs.utmSource));
  const medium = call('lower', presentExpr(inputs.utmMedium));
  const campaign = call('lower', presentExpr(inputs.utmCampaign));
  const domain = inputs.referringDomain;
  const gadSource = presentExpr(inputs.gadSource);
  const hasFbclid = call('isNotNull', presentExpr(inputs.fbclid));
  const isDirectDomain = test(domain, (d) => compare('==', d, constant('$direct')));
  const paid = or([isIn(medium, PAID_MEDIUMS), test(medium, (m) => call('startsWith', m, constant('paid'))), call('isNotNull', presentExpr(inputs.gclid)), call('isNotNull', gadSource)]);
  const direct = and([isDirectDomain, isNull(medium), or([isNull(source), isIn(source, DIRECT_SOURCES)]), not(hasFbclid)]);
  const ifThen = (condition: Expr, value: string): Expr => call('if', condition, constant(value), NULL);
  return call(
    'multiIf',
    test(campaign, (c) => call('like', c, constant(`%${CROSS_NETWORK}%`))),
    constant('Cross Network'),
    paid,
    call('coalesce', siteTypeExpr(source, 'Paid'), ifThen(matchExpr(campaign, SHOPPING_CAMPAIGN), 'Paid Shopping'), mediumTypeExpr(medium, 'paid'), siteTypeExpr(domain, 'Paid'),
      lookup([[test(gadSource, (g) => compare('==', g, constant('1'))), 'Paid Search'], [matchExpr(campaign, VIDEO_CAMPAIGN), 'Paid Video'], [hasFbclid, 'Paid Social'], [constant(1), 'Paid Unknown']])),
    direct,
    constant('Direct'),
    call('coalesce', siteTypeExpr(source, 'Organic'), ifThen(matchExpr(campaign, SHOPPING_CAMPAIGN), 'Organic Shopping'), mediumTypeExpr(medium, 'organic'), siteTypeExpr(domain, 'Organic'),
      lookup([[matchExpr(campaign, VIDEO_CAMPAIGN), 'Organic Video'], [matchExpr(medium, PUSH_MEDIUM), 'Push'], [hasFbclid, 'Organic Social'], [isDirectDomain, 'Direct'], [call('isNotNull', domain), 'Referral'], [constant(1), 'Unknown']])),
  );
}
