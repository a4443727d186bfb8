import { betaQuantile, gammaQuantile, readCount, readFunnel, seededRandom } from './index.js';

/**
 * The references here share nothing with the code under test: densities are written out from
 * their formulas and integrated on a grid (Simpson's rule), or a closed form is used.
 */
const logFactorial = (n: number) => {
  let sum = 0;
  for (let i = 2; i < n; i++) sum += Math.log(i);
  return sum;
};
/** Γ(n) for an integer n, as (n - 1)!. */
const logGammaInt = (n: number) => logFactorial(n);
function betaPdf(a: number, b: number) {
  const norm = logGammaInt(a + b) - logGammaInt(a) - logGammaInt(b);
  return (x: number) => (x <= 0 || x >= 1 ? 0 : Math.exp(norm + (a - 1) * Math.log(x) + (b - 1) * Math.log(1 - x)));
}
function gammaPdf(shape: number, rate: number) {
  const norm = shape * Math.log(rate) - logGammaInt(shape);
  return (x: number) => (x <= 0 ? 0 : Math.exp(norm + (shape - 1) * Math.log(x) - rate * x));
}

function simpson(f: (x: number) => number, from: number, to: number, steps = 20_000): number {
  const h = (to - from) / steps;
  let sum = f(from) + f(to);
  for (let i = 1; i < steps; i++) sum += f(from + i * h) * (i % 2 === 0 ? 2 : 4);
  return (sum * h) / 3;
}

/** P(Y > X) = ∫ f_Y(y) F_X(y) dy, with F_X accumulated on the same grid by the trapezoid rule. */
function chanceGreater(fX: (x: number) => number, fY: (x: number) => number, from: number, to: number, steps = 50_000): number {
  const h = (to - from) / steps;
  let cdfX = 0;
  let total = 0;
  for (let i = 1; i <= steps; i++) {
    const [x0, x1] = [from + (i - 1) * h, from + i * h];
    cdfX += ((fX(x0) + fX(x1)) * h) / 2;
    total += fY(x1) * cdfX * h;
  }
  return total;
}

describe('credible interval bounds are posterior quantiles', () => {
  test('closed forms: Beta(1, 1) is uniform, Beta(a, 1) has x^a as distribution function, Gamma(1, rate) is exponential', () => {
    expect(betaQuantile(0.025, 1, 1)).toBeCloseTo(0.025, 9);
    expect(betaQuantile(0.975, 4, 1)).toBeCloseTo(Math.pow(0.975, 1 / 4), 9);
    expect(betaQuantile(0.025, 1, 6)).toBeCloseTo(1 - Math.pow(0.975, 1 / 6), 9);
    expect(gammaQuantile(0.975, 1, 3)).toBeCloseTo(-Math.log(0.025) / 3, 9);
  });

  test.each([
    [31, 71],
    [2, 500],
    [480, 530],
  ])('Beta(%i, %i): the density integrates to 2.5%% below the lower bound and 97.5%% below the upper', (a, b) => {
    const f = betaPdf(a, b);
    expect(simpson(f, 0, betaQuantile(0.025, a, b))).toBeCloseTo(0.025, 5);
    expect(simpson(f, 0, betaQuantile(0.975, a, b))).toBeCloseTo(0.975, 5);
  });

  test.each([
    [41, 101],
    [3, 2],
    [1201, 401],
  ])('Gamma(%i, rate %i): likewise', (shape, rate) => {
    const f = gammaPdf(shape, rate);
    const upper = gammaQuantile(0.975, shape, rate);
    expect(simpson(f, 0, gammaQuantile(0.025, shape, rate))).toBeCloseTo(0.025, 5);
    expect(simpson(f, 0, upper)).toBeCloseTo(0.975, 5);
  });
});

describe('chance to win by Monte Carlo agrees with numerical integration', () => {
  test.each([
    [{ s: 40, f: 160 }, { s: 55, f: 145 }],
    [{ s: 120, f: 880 }, { s: 118, f: 882 }],
    [{ s: 3, f: 97 }, { s: 9, f: 91 }],
  ])('funnel control %o vs test %o', (c, t) => {
    const reading = readFunnel({ key: 'control', success_count: c.s, failure_count: c.f }, [{ key: 'test', success_count: t.s, failure_count: t.f }], seededRandom(7));
    const reference = chanceGreater(betaPdf(1 + c.s, 1 + c.f), betaPdf(1 + t.s, 1 + t.f), 0, 1);
    expect(Math.abs(reading.probability.test! - reference)).toBeLessThan(0.015);
    expect(reading.probability.control! + reading.probability.test!).toBeCloseTo(1, 9);
  });

  test.each([
    [{ count: 300, exposure: 200 }, { count: 340, exposure: 200 }],
    [{ count: 50, exposure: 100 }, { count: 45, exposure: 110 }],
  ])('count control %o vs test %o', (c, t) => {
    const reading = readCount({ key: 'control', count: c.count, absolute_exposure: c.exposure }, [{ key: 'test', count: t.count, absolute_exposure: t.exposure }], seededRandom(11));
    const reference = chanceGreater(gammaPdf(1 + c.count, 1 + c.exposure), gammaPdf(1 + t.count, 1 + t.exposure), 0, 5);
    expect(Math.abs(reading.probability.test! - reference)).toBeLessThan(0.015);
  });

  test('with three variants each chance is of being the best of all, so they sum to 1', () => {
    const reading = readFunnel(
      { key: 'control', success_count: 50, failure_count: 150 },
      [
        { key: 'a', success_count: 60, failure_count: 140 },
        { key: 'b', success_count: 58, failure_count: 142 },
      ],
      seededRandom(3),
    );
    expect(reading.probability.control! + reading.probability.a! + reading.probability.b!).toBeCloseTo(1, 9);
    expect(reading.probability.a!).toBeGreaterThan(reading.probability.control!);
  });
});

describe('the verdict, in PostHog words', () => {
  const funnel = (cs: number, cf: number, ts: number, tf: number, seed = 1) =>
    readFunnel({ key: 'control', success_count: cs, failure_count: cf }, [{ key: 'test', success_count: ts, failure_count: tf }], seededRandom(seed));

  test('fewer than 100 exposures in a variant is not_enough_exposure, whatever the difference', () => {
    expect(funnel(0, 99, 99, 0)).toMatchObject({ significant: false, significance_code: 'not_enough_exposure', expected_loss: 1 });
  });

  test('a close race is low_win_probability', () => {
    expect(funnel(100, 900, 102, 898)).toMatchObject({ significant: false, significance_code: 'low_win_probability' });
  });

  test('a clear winner with a small expected loss is significant', () => {
    const reading = funnel(100, 900, 200, 800);
    expect(reading).toMatchObject({ significant: true, significance_code: 'significant' });
    expect(reading.probability.test).toBeGreaterThan(0.99);
    expect(reading.expected_loss).toBeLessThan(0.01);
  });

  test('a likely winner whose lead is uncertain in size is high_loss', () => {
    // Counts per person vary widely, so a 90%+ chance still risks losing more than 0.01 per person.
    const reading = readCount({ key: 'control', count: 10_000, absolute_exposure: 100 }, [{ key: 'test', count: 10_230, absolute_exposure: 100 }], seededRandom(5));
    expect(reading.probability.test).toBeGreaterThan(0.9);
    expect(reading.significance_code).toBe('high_loss');
  });

  test('the same seed gives the same reading', () => {
    expect(funnel(40, 160, 55, 145, 42)).toEqual(funnel(40, 160, 55, 145, 42));
  });

  test('one variant alone, or more than ten, is refused', () => {
    expect(() => readFunnel({ key: 'control', success_count: 1, failure_count: 1 }, [], seededRandom(1))).toThrow(RangeError);
  });
});
