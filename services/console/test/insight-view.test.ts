import { toCsv } from '../src/csv.js';
import { insightView } from '../src/insight-view.js';

describe('insight results are drawn the way each kind is read', () => {
  it('a trend is one line per series over its labels', () => {
    const results = [
      { label: 'Chrome', data: [1, 2], labels: ['1-Nov-2026', '2-Nov-2026'], count: 3 },
      { label: 'Firefox', data: [0, 4], labels: ['1-Nov-2026', '2-Nov-2026'], count: 4 },
    ];
    expect(insightView({ kind: 'TrendsQuery' }, results)).toEqual({
      type: 'line',
      labels: ['1-Nov-2026', '2-Nov-2026'],
      series: [
        { label: 'Chrome', data: [1, 2] },
        { label: 'Firefox', data: [0, 4] },
      ],
    });
  });

  it('a breakdown\'s values past the limit and its events without the property are named Other and None', () => {
    const results = [
      { label: '/files', data: [5], count: 5 },
      { label: '$$_posthog_breakdown_other_$$', data: [2], count: 2 },
      { label: '$$_posthog_breakdown_null_$$', data: [1], count: 1 },
    ];
    expect(insightView({ kind: 'TrendsQuery', trendsFilter: { display: 'ActionsTable' } }, results)).toEqual({ type: 'table', columns: ['Series', 'Total'], rows: [['/files', 5], ['Other', 2], ['None', 1]] });
    expect(insightView({ kind: 'TrendsQuery' }, results)).toEqual(expect.objectContaining({ series: [{ label: '/files', data: [5] }, { label: 'Other', data: [2] }, { label: 'None', data: [1] }] }));
  });

  it('a trend displayed as values is one bar per series, and as a table one row per series', () => {
    const results = [
      { label: 'google.com', data: [1, 2], aggregated_value: 3 },
      { label: 'bing.com', data: [1, 0] },
    ];
    expect(insightView({ kind: 'TrendsQuery', trendsFilter: { display: 'ActionsBarValue' } }, results)).toEqual({
      type: 'bar',
      labels: ['google.com', 'bing.com'],
      series: [{ label: 'Total', data: [3, 1] }],
    });
    expect(insightView({ kind: 'TrendsQuery', trendsFilter: { display: 'ActionsTable' } }, results)).toEqual({
      type: 'table',
      columns: ['Series', 'Total'],
      rows: [
        ['google.com', 3],
        ['bing.com', 1],
      ],
    });
  });

  it('a funnel is one bar per step, one series per breakdown value', () => {
    const steps = (n: number, b?: string) => [
      { name: 'signed up', order: 0, count: n, breakdown_value: b },
      { name: 'paid', order: 1, count: n - 1, breakdown_value: b },
    ];
    expect(insightView({ kind: 'FunnelsQuery' }, steps(5))).toEqual({ type: 'bar', labels: ['1. signed up', '2. paid'], series: [{ label: 'Persons', data: [5, 4] }] });
    expect(insightView({ kind: 'FunnelsQuery' }, [steps(5, 'pro'), steps(3, 'free')])).toMatchObject({
      series: [
        { label: 'pro', data: [5, 4] },
        { label: 'free', data: [3, 2] },
      ],
    });
  });

  it('retention is a triangle of cohorts, each period as a share of the cohort', () => {
    const results = [
      { date: '2026-11-02T00:00:00Z', label: 'Week 0', values: [{ count: 4, label: 'Week 0' }, { count: 1, label: 'Week 1' }] },
      { date: '2026-11-09T00:00:00Z', label: 'Week 1', values: [{ count: 0, label: 'Week 0' }] },
    ];
    expect(insightView({ kind: 'RetentionQuery' }, results)).toEqual({
      type: 'retention',
      periods: ['Week 0', 'Week 1'],
      cohorts: [
        { label: '2026-11-02', size: 4, counts: [4, 1], percentages: [100, 25] },
        { label: '2026-11-09', size: 0, counts: [0], percentages: [0] },
      ],
    });
  });

  it('lifecycle is a line per status', () => {
    const results = ['new', 'returning', 'resurrecting', 'dormant'].map((status, i) => ({ label: `$pageview - ${status}`, status, data: [i, -i], labels: ['a', 'b'] }));
    const view = insightView({ kind: 'LifecycleQuery' }, results);
    expect(view).toMatchObject({ type: 'line', labels: ['a', 'b'] });
    expect(view.type === 'line' && view.series.map((s) => s.label)).toEqual(['$pageview - new', '$pageview - returning', '$pageview - resurrecting', '$pageview - dormant']);
  });

  it('paths are a Sankey diagram: a column per step, nodes as tall as what passes through them, bands as wide as their counts', () => {
    const results = [
      { source: '1_/', target: '2_/pricing', value: 3, average_conversion_time: 90_000 },
      { source: '1_/', target: '2_/docs', value: 1, average_conversion_time: 1500 },
      { source: '2_/pricing', target: '3_/signup', value: 2, average_conversion_time: 60_000 },
    ];
    const view = insightView({ kind: 'PathsQuery' }, results);
    if (view.type !== 'paths') throw new Error(`drawn as ${view.type}`);
    const node = (id: string) => view.nodes.find((n) => n.id === id)!;
    expect(view.nodes.map((n) => [n.id, n.step, n.name, n.value])).toEqual([
      ['1_/', 1, '/', 4],
      ['2_/pricing', 2, '/pricing', 3],
      ['2_/docs', 2, '/docs', 1],
      ['3_/signup', 3, '/signup', 2],
    ]);
    // Columns left to right; the first column's node holds both of its bands, the heavier on top.
    expect(node('1_/').x).toBeLessThan(node('2_/pricing').x);
    expect(node('2_/pricing').x).toBeLessThan(node('3_/signup').x);
    expect(node('2_/pricing').x).toBe(node('2_/docs').x);
    expect(node('1_/').height).toBeCloseTo(4 * (node('2_/docs').height / 1));
    const [heavy, light] = view.links.filter((l) => l.source === '1_/');
    expect([heavy!.target, light!.target]).toEqual(['2_/pricing', '2_/docs']);
    expect(heavy!.width + light!.width).toBeCloseTo(node('1_/').height, 0);
    expect(view.links.map((l) => [l.source, l.target, l.value, l.averageSeconds])).toEqual([
      ['1_/', '2_/pricing', 3, 90],
      ['2_/pricing', '3_/signup', 2, 60],
      ['1_/', '2_/docs', 1, 1.5],
    ]);
    expect(heavy!.d).toMatch(/^M[\d.]+,[\d.]+ C/);
  });

  it('a kind it does not draw says so instead of drawing rows as a line', () => {
    expect(insightView({ kind: 'HogQLQuery' }, [[1, 2]])).toEqual({ type: 'unsupported', kind: 'HogQLQuery' });
  });

  it('no results is an empty state, not an empty chart', () => {
    expect(insightView({ kind: 'TrendsQuery' }, [])).toEqual({ type: 'empty' });
    expect(insightView({ kind: 'TrendsQuery' }, null)).toEqual({ type: 'empty' });
  });
});

describe('CSV download', () => {
  it('quotes fields with commas, quotes and line breaks, and writes objects as JSON', () => {
    expect(toCsv(['a', 'b'], [['x,y', 'say "hi"'], ['line\nbreak', { k: 1 }], [null, 2]])).toBe('a,b\r\n"x,y","say ""hi"""\r\n"line\nbreak","{""k"":1}"\r\n,2\r\n');
  });
});
