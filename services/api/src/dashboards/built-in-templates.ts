import type { DashboardTemplate, TemplateTile } from './dashboard-template.js';

const pageviews = { kind: 'EventsNode', event: '$pageview', name: '$pageview' };
const layout = (x: number, y: number) => ({ sm: { x, y, w: 6, h: 5, minW: 3, minH: 5 } });
const tile = (name: string, description: string, source: Record<string, unknown>, x: number, y: number): TemplateTile => ({
  type: 'INSIGHT',
  name,
  description,
  query: { kind: 'InsightVizNode', source },
  layouts: layout(x, y),
  color: null,
});

/**
 * The templates `use_template` names, as PostHog's "Product analytics" template (its
 * `DEFAULT_APP`) lays them out: built here because PostHog serves its templates from its cloud.
 */
const PRODUCT_ANALYTICS: DashboardTemplate = {
  template_name: 'Product analytics',
  dashboard_description: 'Active users, retention, growth and where visitors come from and go.',
  dashboard_filters: {},
  tags: [],
  tiles: [
    tile('Daily active users (DAUs)', 'Unique users with a pageview each day.', { kind: 'TrendsQuery', series: [{ ...pageviews, math: 'dau' }], interval: 'day', dateRange: { date_from: '-30d' }, trendsFilter: { display: 'ActionsLineGraph' } }, 0, 0),
    tile('Weekly active users (WAUs)', 'Unique users with a pageview in the seven days to each day.', { kind: 'TrendsQuery', series: [{ ...pageviews, math: 'weekly_active' }], interval: 'day', dateRange: { date_from: '-30d' }, trendsFilter: { display: 'ActionsLineGraph' } }, 6, 0),
    tile('Retention', 'Of the users first seen each week, how many came back in the weeks after.', { kind: 'RetentionQuery', retentionFilter: { period: 'Week', totalIntervals: 8, retentionType: 'retention_first_time', targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' } } }, 0, 5),
    tile('Growth accounting', 'New, returning, resurrecting and dormant users each week.', { kind: 'LifecycleQuery', series: [pageviews], interval: 'week', dateRange: { date_from: '-30d' } }, 6, 5),
    tile('Referring domains (last 14 days)', 'Where pageviews came from.', { kind: 'TrendsQuery', series: [pageviews], dateRange: { date_from: '-14d' }, breakdownFilter: { breakdown: '$referring_domain', breakdown_type: 'event', breakdown_limit: 10 }, trendsFilter: { display: 'ActionsBarValue' } }, 0, 10),
    tile('Pageviews by path (last 14 days)', 'The most viewed pages.', { kind: 'TrendsQuery', series: [pageviews], dateRange: { date_from: '-14d' }, breakdownFilter: { breakdown: '$pathname', breakdown_type: 'event', breakdown_limit: 10 }, trendsFilter: { display: 'ActionsTable' } }, 6, 10),
  ],
};

const BUILT_IN: Record<string, DashboardTemplate> = { DEFAULT_APP: PRODUCT_ANALYTICS, 'Product analytics': PRODUCT_ANALYTICS };

export const BUILT_IN_TEMPLATE_NAMES = Object.keys(BUILT_IN);

export const builtInTemplate = (name: string): DashboardTemplate | undefined => (Object.hasOwn(BUILT_IN, name) ? structuredClone(BUILT_IN[name]) : undefined);
