import fc from 'fast-check';
import { Sql, createClickHouse, serverOf, type ClickHouse } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { channelTypeExpr, classifyChannel, type ChannelInputs, type ChannelType } from '../src/channel-type.js';
import type { Expr, SelectQuery } from '../src/ast.js';
import { printQuery } from '../src/printer.js';
import type { ClickHouseServer } from '../src/server-features.js';

const none: ChannelInputs = { utmSource: null, utmMedium: null, utmCampaign: null, referringDomain: null, gclid: null, gadSource: null, fbclid: null };

/** Sessions' entry attributes and the channel PostHog's default rules give them. */
export const CHANNEL_CASES: [string, Partial<ChannelInputs>, ChannelType][] = [
  ['no referrer and no UTM', { referringDomain: '$direct' }, 'Direct'],
  ['a direct utm_source', { referringDomain: '$direct', utmSource: '(direct)' }, 'Direct'],
  ['nothing known at all', {}, 'Unknown'],
  ['a search engine referrer', { referringDomain: 'www.google.com' }, 'Organic Search'],
  ['a country search domain', { referringDomain: 'www.google.co.uk' }, 'Organic Search'],
  ['a social referrer', { referringDomain: 'l.facebook.com' }, 'Organic Social'],
  ['t.co', { referringDomain: 't.co' }, 'Organic Social'],
  ['a video referrer', { referringDomain: 'www.youtube.com' }, 'Organic Video'],
  ['a shopping referrer', { referringDomain: 'www.amazon.de' }, 'Organic Shopping'],
  ['any other referrer', { referringDomain: 'news.ycombinator.com' }, 'Referral'],
  ['a gclid', { referringDomain: 'www.google.com', gclid: 'abc' }, 'Paid Search'],
  ['cpc from google', { utmSource: 'Google', utmMedium: 'CPC', referringDomain: '$direct' }, 'Paid Search'],
  ['paid social by medium', { utmSource: 'newsletter-partner', utmMedium: 'paid_social', referringDomain: 'partner.example' }, 'Paid Unknown'],
  ['cpc from facebook', { utmSource: 'facebook', utmMedium: 'cpc' }, 'Paid Social'],
  ['cpc with an fbclid and an unknown source', { utmSource: 'partner', utmMedium: 'cpc', fbclid: 'x' }, 'Paid Social'],
  ['gad_source 1', { gadSource: '1' }, 'Paid Search'],
  ['a paid shopping campaign', { utmMedium: 'ppc', utmCampaign: 'summer-shopping' }, 'Paid Shopping'],
  ['a paid video campaign', { utmMedium: 'cpv', utmCampaign: 'launch video' }, 'Paid Video'],
  ['paid display', { utmMedium: 'paid', utmSource: 'partner' }, 'Paid Unknown'],
  ['a cross-network campaign', { utmCampaign: 'Q3-Cross-Network', utmMedium: 'cpc', utmSource: 'google' }, 'Cross Network'],
  ['email', { utmMedium: 'email', utmSource: 'newsletter' }, 'Email'],
  ['an organic social medium', { utmMedium: 'social', utmSource: 'partner' }, 'Organic Social'],
  ['an organic search utm_source', { utmSource: 'duckduckgo', referringDomain: '$direct' }, 'Organic Search'],
  ['an affiliate', { utmMedium: 'affiliate' }, 'Affiliate'],
  ['push by suffix', { utmMedium: 'web-push' }, 'Push'],
  ['an organic shopping campaign', { utmCampaign: 'shop-the-look', referringDomain: 'blog.example' }, 'Organic Shopping'],
  ['an organic video campaign', { utmCampaign: 'video-series', referringDomain: 'blog.example' }, 'Organic Video'],
  ['an fbclid without a medium', { fbclid: 'x', referringDomain: '$direct' }, 'Organic Social'],
  ['empty and "null" texts are absent', { utmSource: '', utmMedium: 'null', referringDomain: '$direct', gclid: '' }, 'Direct'],
  ['a domain that only contains a search name', { referringDomain: 'googleblog.example.com' }, 'Referral'],
];

export const inputsOf = (partial: Partial<ChannelInputs>): ChannelInputs => ({ ...none, ...partial });

const VALUES = {
  utmSource: ['google', 'Facebook', 'newsletter', 'direct', 'partner', 'youtube.com', '', 'null'],
  utmMedium: ['cpc', 'paid_search', 'email', 'social', 'organic', 'referral', 'web-push', 'display', 'sms', ''],
  utmCampaign: ['cross-network', 'summer-shopping', 'video-launch', 'brand', 'shop'],
  referringDomain: ['$direct', 'www.google.com', 'l.facebook.com', 't.co', 'www.youtube.com', 'www.ebay.co.uk', 'news.ycombinator.com', 'x.example.com'],
  gclid: ['abc', ''],
  gadSource: ['1', '2', ''],
  fbclid: ['fb1', ''],
} satisfies Record<keyof ChannelInputs, string[]>;

/** Inputs drawn from values each rule reads, absent half the time. */
export const channelInputs: fc.Arbitrary<ChannelInputs> = fc.record(
  Object.fromEntries(Object.entries(VALUES).map(([key, values]) => [key, fc.option(fc.constantFrom(...values), { nil: null })])) as { [K in keyof ChannelInputs]: fc.Arbitrary<string | null> },
);

/** A value as the sessions table has one: an absent one is a Nullable(String) NULL, as 18.16 compares no bare NULL with IN. */
const literal = (value: string | null): Expr =>
  value === null ? { node: 'Call', name: 'nullIf', args: [{ node: 'Constant', value: '' }, { node: 'Constant', value: '' }] } : { node: 'Constant', value };
/** Inputs per statement: each channel expression prints to some kilobytes, and a statement is at most 256 KiB. */
const PER_STATEMENT = 20;

/** The channels ClickHouse gives the inputs through `channelTypeExpr`, as the printer prints it for `server`. */
export async function channelsInClickHouse(clickhouse: ClickHouse, server: ClickHouseServer, inputs: ChannelInputs[]): Promise<string[]> {
  const channels: string[] = [];
  for (let i = 0; i < inputs.length; i += PER_STATEMENT) channels.push(...(await statementChannels(clickhouse, server, inputs.slice(i, i + PER_STATEMENT))));
  return channels;
}

async function statementChannels(clickhouse: ClickHouse, server: ClickHouseServer, inputs: ChannelInputs[]): Promise<string[]> {
  const select: SelectQuery = {
    node: 'SelectQuery',
    select: inputs.map((i, n) => ({ node: 'Alias', alias: `c${n}`, expr: channelTypeExpr(Object.fromEntries(Object.entries(i).map(([k, v]) => [k, literal(v)])) as Record<keyof ChannelInputs, Expr>) })),
  };
  const { data } = await clickhouse.queryCompact(Sql.trusted(printQuery(select, { teamId: 1, server }).clickhouse));
  return data[0] as string[];
}

/** The channel type expression the sessions table prints gives the plain classifier's channel, on the stack's 18.16 (`server`) or chdb's 26. */
export function channelSuite(engine: 'server' | 'chdb'): void {
  let clickhouse: ClickHouse;
  beforeAll(async () => {
    clickhouse = engine === 'chdb' ? await (await import('@tributary/test-support/chdb')).createChdbClickHouse() : createClickHouse(testConfig());
  });
  afterAll(() => clickhouse.close());

  const agree = async (inputs: ChannelInputs[]) => expect(await channelsInClickHouse(clickhouse, await serverOf(clickhouse), inputs)).toEqual(inputs.map(classifyChannel));

  it('agrees with the classifier on the listed cases', () => agree(CHANNEL_CASES.map(([, i]) => inputsOf(i))));
  it('agrees with the classifier on generated inputs', () => agree(fc.sample(channelInputs, { numRuns: 300, seed: 62 })));
}
