import { sampleBeta, sampleGamma, type Random } from './random.js';
import { betaQuantile, gammaQuantile } from './special-functions.js';

/** PostHog's thresholds: each variant needs this many exposures before any verdict. */
export const MIN_EXPOSURE = 100;
/** The leader's chance to win must reach this to be significant. */
export const MIN_PROBABILITY_FOR_SIGNIFICANCE = 0.9;
/** ...and choosing it must cost less than this in expected loss. */
export const EXPECTED_LOSS_SIGNIFICANCE_LEVEL = 0.01;
/** Draws per posterior, as PostHog's. */
export const SAMPLE_SIZE = 10_000;
/** Variants one reading compares at most (control included), as PostHog's. */
export const MAX_VARIANTS = 10;

export type SignificanceCode = 'significant' | 'not_enough_exposure' | 'low_win_probability' | 'high_loss';

/** A funnel's variant: persons exposed who completed every step, and those who did not. */
export interface FunnelVariantStats {
  key: string;
  success_count: number;
  failure_count: number;
}

/** A count's variant: metric events after exposure, and persons exposed. */
export interface CountVariantStats {
  key: string;
  count: number;
  absolute_exposure: number;
}

export interface BayesianReading {
  /** Each variant's chance to win: the control's to beat every test, a test's to beat the control and every other test. */
  probability: Record<string, number>;
  /** 95% credible interval of each variant's conversion rate (funnels) or events per exposed person (counts). */
  credible_intervals: Record<string, [number, number]>;
  significant: boolean;
  significance_code: SignificanceCode;
  /** The expected loss of choosing the variant with the best observed rate; 1 when no verdict is reached. */
  expected_loss: number;
}

interface Posterior {
  key: string;
  exposure: number;
  observedRate: number;
  draw: (random: Random) => number;
  interval: [number, number];
}

const CREDIBLE_MASS = 0.95;
const tails = [(1 - CREDIBLE_MASS) / 2, (1 + CREDIBLE_MASS) / 2] as const;

/** Conversions read with Beta(1, 1) priors: Beta(1 + successes, 1 + failures) posteriors. */
export function readFunnel(control: FunnelVariantStats, tests: readonly FunnelVariantStats[], random: Random): BayesianReading {
  const posterior = (v: FunnelVariantStats): Posterior => {
    const [a, b] = [1 + v.success_count, 1 + v.failure_count];
    const exposure = v.success_count + v.failure_count;
    return {
      key: v.key,
      exposure,
      observedRate: exposure === 0 ? 0 : v.success_count / exposure,
      draw: (r) => sampleBeta(a, b, r),
      interval: [betaQuantile(tails[0], a, b), betaQuantile(tails[1], a, b)],
    };
  };
  return read(posterior(control), tests.map(posterior), random);
}

/** Events per exposed person read with a Gamma(1, 1) prior on a Poisson rate: Gamma(1 + count, 1 + exposure) posteriors. */
export function readCount(control: CountVariantStats, tests: readonly CountVariantStats[], random: Random): BayesianReading {
  const posterior = (v: CountVariantStats): Posterior => {
    const [shape, rate] = [1 + v.count, 1 + v.absolute_exposure];
    return {
      key: v.key,
      exposure: v.absolute_exposure,
      observedRate: v.absolute_exposure === 0 ? 0 : v.count / v.absolute_exposure,
      draw: (r) => sampleGamma(shape, rate, r),
      interval: [gammaQuantile(tails[0], shape, rate), gammaQuantile(tails[1], shape, rate)],
    };
  };
  return read(posterior(control), tests.map(posterior), random);
}

function read(control: Posterior, tests: readonly Posterior[], random: Random): BayesianReading {
  if (tests.length < 1 || tests.length + 1 > MAX_VARIANTS) throw new RangeError(`An experiment compares 2 to ${MAX_VARIANTS} variants, not ${tests.length + 1}.`);
  const all = [control, ...tests];
  const draws = all.map((p) => Array.from({ length: SAMPLE_SIZE }, () => p.draw(random)));
  const wins = all.map(() => 0);
  for (let i = 0; i < SAMPLE_SIZE; i++) {
    let best = 0;
    for (let v = 1; v < all.length; v++) if (draws[v]![i]! > draws[best]![i]!) best = v;
    wins[best]! += 1;
  }
  const probability = Object.fromEntries(all.map((p, v) => [p.key, wins[v]! / SAMPLE_SIZE]));
  const credible_intervals = Object.fromEntries(all.map((p) => [p.key, p.interval]));
  const verdict = (significance_code: SignificanceCode, expected_loss = 1): BayesianReading => ({
    probability,
    credible_intervals,
    significant: significance_code === 'significant',
    significance_code,
    expected_loss,
  });
  if (all.some((p) => p.exposure < MIN_EXPOSURE)) return verdict('not_enough_exposure');
  if (Math.max(...Object.values(probability)) < MIN_PROBABILITY_FOR_SIGNIFICANCE) return verdict('low_win_probability');
  const leader = all.reduce((best, p, v) => (p.observedRate > all[best]!.observedRate ? v : best), 0);
  let loss = 0;
  for (let i = 0; i < SAMPLE_SIZE; i++) {
    const rival = Math.max(...all.map((_, v) => (v === leader ? -Infinity : draws[v]![i]!)));
    loss += Math.max(0, rival - draws[leader]![i]!);
  }
  const expectedLoss = loss / SAMPLE_SIZE;
  return verdict(expectedLoss < EXPECTED_LOSS_SIGNIFICANCE_LEVEL ? 'significant' : 'high_loss', expectedLoss);
}
