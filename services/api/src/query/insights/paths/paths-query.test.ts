import { HogQLError, loadHogQLParser, printHogQL, printQuery } from '@tributary/hogql';
import { buildPathsQuery, groupingPattern, shapePaths, validatePathsQuery, type PathsQueryRequest } from './paths-query.js';

beforeAll(() => loadHogQLParser());

const period = { from: new Date('2024-05-01T00:00:00Z'), to: new Date('2024-05-11T00:00:00Z'), buckets: [] };
const filters = { now: new Date('2024-05-20T00:00:00Z'), cohorts: new Map() };
const request = (pathsFilter: PathsQueryRequest['pathsFilter']): PathsQueryRequest => ({ kind: 'PathsQuery', pathsFilter });

describe('PathsQuery', () => {
  it('reads pageviews by $current_url without a trailing slash and screens by name, only the types asked for, for the project alone', async () => {
    const hogql = printHogQL(await buildPathsQuery(request({ includeEventTypes: ['$pageview', '$screen'] }), period, filters));
    expect(hogql).toContain("replaceRegexpAll(ifNull(properties.$current_url, ''), '(.)/$', '\\\\1')");
    expect(hogql).toContain("if(event = '$screen', properties.$screen_name");
    expect(hogql).toContain("(event = '$pageview') OR (event = '$screen')");
    const sql = printQuery(await buildPathsQuery(request({}), period, filters), { teamId: 42 }).clickhouse;
    expect(sql).toContain('`events`.team_id = 42');
  });

  it('applies the cleaning rules in order, then names a step by the first grouping it matches, then leaves out the excluded', async () => {
    const hogql = printHogQL(
      await buildPathsQuery(request({ localPathCleaningFilters: [{ regex: '\\d+', alias: ':id' }, { regex: '\\?.*', alias: '' }], pathGroupings: ['/a/*', '/b*'], excludeEvents: ['/c'] }), period, filters),
    );
    expect(hogql).toContain("replaceRegexpAll(replaceRegexpAll(ifNull(");
    expect(hogql).toContain("'\\\\d+', ':id'), '\\\\?.*', '') AS path_item_cleaned");
    expect(hogql).toContain("multiIf(match(path_item_cleaned, '\\\\/a\\\\/.*'), '/a/*', match(path_item_cleaned, '\\\\/b.*'), '/b*', path_item_cleaned) AS path_item");
    expect(hogql).toContain("path_item NOT IN ('/c',)");
  });

  it('a grouping is its text, with * for anything', () => {
    expect(groupingPattern('/product/*/reviews?')).toBe('\\/product\\/.*\\/reviews\\?');
    expect(new RegExp(groupingPattern('/p*.html')).test('/pages/a.html')).toBe(true);
    expect(new RegExp(groupingPattern('/p*.html')).test('/pages/ahtml')).toBe(false);
  });

  it('keeps only edges a first step leads to, through the edges kept, and gives times in milliseconds', () => {
    const rows = [
      ['1_/', '2_/a', 3, 1.5],
      ['2_/a', '3_/b', 2, 2],
      ['2_/x', '3_/y', 2, 4],
      ['3_/b', '4_/c', 1, 0],
    ];
    expect(shapePaths(rows)).toEqual([
      { source: '1_/', target: '2_/a', value: 3, average_conversion_time: 1500 },
      { source: '2_/a', target: '3_/b', value: 2, average_conversion_time: 2000 },
      { source: '3_/b', target: '4_/c', value: 1, average_conversion_time: 0 },
    ]);
  });

  it.each([
    ['a cleaning rule RE2 cannot run', { localPathCleaningFilters: [{ regex: '(?<=a)b', alias: '' }] }, 'localPathCleaningFilters[0].regex uses syntax'],
    ['a cleaning rule without its regex', { localPathCleaningFilters: [{ alias: 'x' }] }, 'localPathCleaningFilters[0].regex is required'],
    ['a cleaning alias naming a group its regex lacks', { localPathCleaningFilters: [{ regex: '/(\\d+)', alias: '/\\2' }] }, 'alias names group 2, which the regex does not have'],
    ['a cleaning alias with a backslash ClickHouse reads otherwise', { localPathCleaningFilters: [{ regex: 'a', alias: '\\x' }] }, 'alias may hold a backslash only'],
    ['weights that make no range', { minEdgeWeight: 3, maxEdgeWeight: 2 }, 'minEdgeWeight must not be above maxEdgeWeight'],
  ])('refuses %s', (_name, pathsFilter, message) => {
    expect(() => validatePathsQuery(request(pathsFilter))).toThrow(HogQLError);
    expect(() => validatePathsQuery(request(pathsFilter))).toThrow(message);
  });

  it('takes a cleaning alias naming the groups its regex has', () => {
    expect(() => validatePathsQuery(request({ localPathCleaningFilters: [{ regex: '/(\\w+)/(\\d+)', alias: '/\\1/:id\\\\\\0' }] }))).not.toThrow();
  });

  it('refuses an aggregate as the step expression', async () => {
    await expect(buildPathsQuery(request({ includeEventTypes: ['hogql'], pathsHogQLExpression: 'count()' }), period, filters)).rejects.toThrow('not an aggregate');
  });
});
