import { loadHogQLParser } from '@tributary/hogql';
import { parseFormula } from './trends-formula.js';
import { applyFormula, scaleSampledSeries, type TrendsResult } from './trends-results.js';
import type { TrendsEventsNode } from './trends-query.js';

/** A trend read from a sample, scaled as PostHog's correct_result_for_sampling scales it. */
beforeAll(() => loadHogQLParser());

const base = { days: ['2024-01-01', '2024-01-02'], filter: {}, label: 'x' };
const line = (order: number, data: number[]): TrendsResult => ({ ...base, action: { order } as never, data, count: data.reduce((a, b) => a + b, 0) });
const series = (math: TrendsEventsNode['math']): TrendsEventsNode => ({ kind: 'EventsNode', event: '$pageview', math });

it('counts, persons and sums are scaled by 1/factor and rounded; the count is the sum of the scaled points', () => {
  for (const math of ['total', 'dau', 'weekly_active', 'unique_session', 'unique_group', 'sum'] as const) {
    expect(scaleSampledSeries([line(0, [3, 7])], series(math), 0.3)).toEqual([line(0, [10, 23])]);
  }
  const total = { ...base, action: null, data: [], count: 0, aggregated_value: 7 };
  expect(scaleSampledSeries([total], series('total'), 0.1)[0]!.aggregated_value).toBe(70);
});

it('averages, extremes and quantiles are left as measured; so is an unsampled answer', () => {
  for (const math of ['avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'] as const) expect(scaleSampledSeries([line(0, [3, 7])], series(math), 0.1)).toEqual([line(0, [3, 7])]);
  expect(scaleSampledSeries([line(0, [3, 7])], series('total'), null)).toEqual([line(0, [3, 7])]);
});

it('series are scaled before a formula: a ratio of two sampled series is the ratio measured', async () => {
  const scaled = [scaleSampledSeries([line(0, [4, 9])], series('total'), 0.5), scaleSampledSeries([line(1, [2, 3])], series('total'), 0.5)].flat();
  const [ratio] = applyFormula(scaled, await parseFormula('A / B', 2), 'A / B', 2, false);
  expect(ratio!.data).toEqual([2, 3]);
});
