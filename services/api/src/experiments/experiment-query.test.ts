import { loadHogQLParser, type FilterContext } from '@tributary/hogql';
import type { CompactResult } from '@tributary/clickhouse';
import { runExperimentQuery, type ExperimentQueryRequest } from './experiment-query.js';
import type { ExperimentRow } from './experiment-store.js';

/**
 * The reading of each query kind against a reference computed here by numerical integration over
 * the posteriors (Beta(1 + successes, 1 + failures) for funnels, Gamma(1 + count, 1 + exposure)
 * for counts), not by the package's Monte Carlo: chance to win, 95% credible intervals, expected
 * loss, and the verdict PostHog's thresholds give (100 exposures per variant, 90% to win, 1% loss).
 */
const row = {
  id: 1,
  start_date: new Date('2024-03-01T00:00:00Z'),
  end_date: new Date('2024-03-31T00:00:00Z'),
  feature_flag: { id: 1, key: 'checkout', filters: { multivariate: { variants: [{ key: 'control' }, { key: 'test' }] } } },
} as unknown as ExperimentRow;
const step = (event: string) => ({ kind: 'EventsNode' as const, event });
const trends: ExperimentQueryRequest = { kind: 'ExperimentTrendsQuery', experiment_id: 1, count_query: { kind: 'TrendsQuery', series: [step('purchase')] } };
const funnels: ExperimentQueryRequest = { kind: 'ExperimentFunnelsQuery', experiment_id: 1, funnels_query: { kind: 'FunnelsQuery', series: [step('view'), step('purchase')] } };
const context = (): FilterContext => ({ now: new Date(), cohorts: new Map() });
const answering = (rows: unknown[][]) => async (): Promise<CompactResult> => ({ data: rows, meta: [] }) as unknown as CompactResult;

function logGamma(x: number): number {
  // Lanczos (g = 7, n = 9): relative error below 1e-13 for x > 0.5.
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  const z = x - 1;
  let sum = c[0]!;
  for (let i = 1; i < 9; i++) sum += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** A density on an even grid, with its distribution function by the trapezoid rule. */
interface Gridded {
  x: number[];
  pdf: number[];
  cdf: number[];
}
const POINTS = 40_000;
function gridded(logPdf: (x: number) => number, lo: number, hi: number): Gridded {
  const h = (hi - lo) / (POINTS - 1);
  const x = Array.from({ length: POINTS }, (_, i) => lo + i * h);
  const pdf = x.map((v) => Math.exp(logPdf(v)));
  const cdf = [0];
  for (let i = 1; i < POINTS; i++) cdf.push(cdf[i - 1]! + ((pdf[i]! + pdf[i - 1]!) * h) / 2);
  const total = cdf.at(-1)!;
  return { x, pdf: pdf.map((p) => p / total), cdf: cdf.map((c) => c / total) };
}
const beta = (a: number, b: number): Gridded => gridded((x) => (x <= 0 || x >= 1 ? -Infinity : (a - 1) * Math.log(x) + (b - 1) * Math.log(1 - x) - (logGamma(a) + logGamma(b) - logGamma(a + b))), 0, 1);
function gamma(shape: number, rate: number, lo: number, hi: number): Gridded {
  return gridded((x) => (x <= 0 ? -Infinity : shape * Math.log(rate) + (shape - 1) * Math.log(x) - rate * x - logGamma(shape)), lo, hi);
}

/** Interpolated value of `f` (a function on the grid of `g`) at `t`. */
function at(g: Gridded, f: number[], t: number): number {
  const h = g.x[1]! - g.x[0]!;
  const i = Math.min(POINTS - 2, Math.max(0, Math.floor((t - g.x[0]!) / h)));
  const w = Math.min(1, Math.max(0, (t - g.x[i]!) / h));
  return f[i]! * (1 - w) + f[i + 1]! * w;
}
function quantile(g: Gridded, p: number): number {
  const i = g.cdf.findIndex((c) => c >= p);
  const w = (p - g.cdf[i - 1]!) / (g.cdf[i]! - g.cdf[i - 1]!);
  return g.x[i - 1]! + w * (g.x[i]! - g.x[i - 1]!);
}
/** P(Y > X) = ∫ f_Y(y) F_X(y) dy, on Y's grid. */
function chanceAbove(y: Gridded, x: Gridded): number {
  const h = y.x[1]! - y.x[0]!;
  return y.x.reduce((sum, v, i) => sum + y.pdf[i]! * at(x, x.cdf, v) * h, 0);
}
/** E[max(0, Y − X)] = ∫ f_X(x) ∫_x^∞ (1 − F_Y(y)) dy dx. */
function expectedLoss(x: Gridded, y: Gridded): number {
  const h = y.x[1]! - y.x[0]!;
  const tail = new Array<number>(POINTS).fill(0);
  for (let i = POINTS - 2; i >= 0; i--) tail[i] = tail[i + 1]! + ((2 - y.cdf[i]! - y.cdf[i + 1]!) * h) / 2;
  const below = (t: number) => (t <= y.x[0]! ? tail[0]! + (y.x[0]! - t) : at(y, tail, t));
  const hx = x.x[1]! - x.x[0]!;
  return x.x.reduce((sum, v, i) => sum + x.pdf[i]! * below(v) * hx, 0);
}

/** The reference reading of two variants (control, test) with posteriors `c` and `t`, observed rates and exposures. */
function reference(c: Gridded, t: Gridded, rates: [number, number], exposures: [number, number]) {
  const testWins = chanceAbove(t, c);
  const probability = { control: 1 - testWins, test: testWins };
  const credible_intervals = { control: [quantile(c, 0.025), quantile(c, 0.975)], test: [quantile(t, 0.025), quantile(t, 0.975)] };
  if (Math.min(...exposures) < 100) return { probability, credible_intervals, code: 'not_enough_exposure', loss: 1 };
  if (Math.max(testWins, 1 - testWins) < 0.9) return { probability, credible_intervals, code: 'low_win_probability', loss: 1 };
  const loss = rates[1] > rates[0] ? expectedLoss(t, c) : expectedLoss(c, t);
  return { probability, credible_intervals, code: loss < 0.01 ? 'significant' : 'high_loss', loss };
}

function expectReading(answer: Record<string, any>, ref: ReturnType<typeof reference>, lossKey: 'expected_loss' | 'p_value') {
  for (const key of ['control', 'test'] as const) {
    expect(Math.abs(answer.probability[key] - ref.probability[key])).toBeLessThan(0.02);
    expect(answer.credible_intervals[key][0]).toBeCloseTo(ref.credible_intervals[key][0]!, 3);
    expect(answer.credible_intervals[key][1]).toBeCloseTo(ref.credible_intervals[key][1]!, 3);
  }
  expect(answer.significance_code).toBe(ref.code);
  expect(answer.significant).toBe(ref.code === 'significant');
  if (ref.loss === 1) expect(answer[lossKey]).toBe(1);
  else expect(Math.abs(answer[lossKey] - ref.loss)).toBeLessThan(Math.max(0.002, ref.loss * 0.1));
}

beforeAll(() => loadHogQLParser());

describe('ExperimentFunnelsQuery reads conversions with Beta posteriors', () => {
  it.each([
    ['not_enough_exposure', [10, 40], [20, 60]],
    ['low_win_probability', [100, 900], [105, 895]],
    ['significant', [100, 900], [200, 800]],
  ] as const)('%s: control %j and test %j (successes, failures)', async (code, [cs, cf], [ts, tf]) => {
    const answer = (await runExperimentQuery(funnels, row, answering([['control', cs + cf, cs], ['test', ts + tf, ts]]), context())) as Record<string, any>;
    expect(answer.variants).toEqual([{ key: 'control', success_count: cs, failure_count: cf }, { key: 'test', success_count: ts, failure_count: tf }]);
    const ref = reference(beta(1 + cs, 1 + cf), beta(1 + ts, 1 + tf), [cs / (cs + cf), ts / (ts + tf)], [cs + cf, ts + tf]);
    expect(ref.code).toBe(code);
    expectReading(answer, ref, 'expected_loss');
    expect(answer.insight).toEqual([
      [expect.objectContaining({ order: 0, count: cs + cf, breakdown_value: ['control'] }), expect.objectContaining({ order: 1, count: cs, breakdown_value: ['control'] })],
      [expect.objectContaining({ order: 0, count: ts + tf, breakdown_value: ['test'] }), expect.objectContaining({ order: 1, count: ts, breakdown_value: ['test'] })],
    ]);
  });
});

describe('ExperimentTrendsQuery reads events per exposed person with Gamma posteriors', () => {
  it.each([
    ['not_enough_exposure', [30, 50], [60, 50]],
    ['low_win_probability', [1000, 1000], [1010, 1000]],
    ['significant', [1000, 1000], [1300, 1000]],
    ['high_loss', [100_000, 1000], [100_650, 1000]],
  ] as const)('%s: control %j and test %j (events, exposed persons)', async (code, [cc, ce], [tc, te]) => {
    const answer = (await runExperimentQuery(trends, row, answering([['control', cc, ce], ['test', tc, te]]), context())) as Record<string, any>;
    expect(answer.variants).toEqual([{ key: 'control', count: cc, exposure: 1, absolute_exposure: ce }, { key: 'test', count: tc, exposure: te / ce, absolute_exposure: te }]);
    const span = (count: number, exposure: number): [number, number] => {
      const [mean, sd] = [(1 + count) / (1 + exposure), Math.sqrt(1 + count) / (1 + exposure)];
      return [Math.max(0, mean - 12 * sd), mean + 12 * sd];
    };
    const [lo, hi] = [Math.min(span(cc, ce)[0], span(tc, te)[0]), Math.max(span(cc, ce)[1], span(tc, te)[1])];
    const ref = reference(gamma(1 + cc, 1 + ce, lo, hi), gamma(1 + tc, 1 + te, lo, hi), [cc / ce, tc / te], [ce, te]);
    expect(ref.code).toBe(code);
    expectReading(answer, ref, 'p_value');
  });

  it('a variant no one was exposed to reads as zeros, and the verdict waits for exposure', async () => {
    const answer = (await runExperimentQuery(trends, row, answering([['test', 5, 3]]), context())) as Record<string, any>;
    expect(answer.variants[0]).toEqual({ key: 'control', count: 0, exposure: 0, absolute_exposure: 0 });
    expect(answer.significance_code).toBe('not_enough_exposure');
  });
});

describe('what a query cannot read is a 400 naming it', () => {
  it('an experiment that has not started', async () => {
    await expect(runExperimentQuery(trends, { ...row, start_date: null }, answering([]), context())).rejects.toMatchObject({ status: 400, attr: 'start_date' });
  });

  it('an experiment whose flag was changed to a single variant', async () => {
    const single = { ...row, feature_flag: { ...row.feature_flag!, filters: { multivariate: { variants: [{ key: 'control' }] } } } } as ExperimentRow;
    await expect(runExperimentQuery(trends, single, answering([]), context())).rejects.toMatchObject({ status: 400, attr: 'experiment_id' });
  });

  it('an experiment whose flag was deleted', async () => {
    await expect(runExperimentQuery(trends, { ...row, feature_flag: null }, answering([]), context())).rejects.toMatchObject({ status: 400, attr: 'experiment_id' });
  });
});
