/** Regularized incomplete gamma and beta functions, and quantiles found by bisection on them. */

const EPSILON = 1e-14;
const MAX_ITERATIONS = 10_000;

/** ln Γ(x) by the Lanczos approximation (g = 7, nine terms), accurate to about 1e-15 for x > 0. */
export function logGamma(x: number): number {
  const g = 7;
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let sum = c[0]!;
  for (let i = 1; i < g + 2; i++) sum += c[i]! / (z + i);
  const t = z + g + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** P(a, x): the Gamma(a, 1) distribution function at x (series below a + 1, continued fraction for the tail above). */
export function gammaP(a: number, x: number): number {
  if (x <= 0) return 0;
  const front = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < MAX_ITERATIONS && Math.abs(term) > Math.abs(sum) * EPSILON; n++) {
      term *= x / (a + n);
      sum += term;
    }
    return Math.min(1, sum * front);
  }
  const tail = front / continuedFraction((n) => -n * (n - a), (n) => x + 1 - a + 2 * n);
  return Math.max(0, 1 - tail);
}

/** I_x(a, b): the Beta(a, b) distribution function at x, by its continued fraction on the side where it converges fast. */
export function betaI(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - betaI(b, a, 1 - x);
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  const term = (m: number) => {
    const k = Math.floor(m / 2);
    return m % 2 === 0 ? (k * (b - k) * x) / ((a + 2 * k - 1) * (a + 2 * k)) : -((a + k) * (a + b + k) * x) / ((a + 2 * k) * (a + 2 * k + 1));
  };
  return front / (a * continuedFraction(term, () => 1));
}

/** b(0) + a(1) / (b(1) + a(2) / (b(2) + ...)), by Lentz's method. */
function continuedFraction(aOf: (n: number) => number, bOf: (n: number) => number): number {
  const tiny = 1e-300;
  const nonZero = (v: number) => (Math.abs(v) < tiny ? tiny : v);
  let f = nonZero(bOf(0));
  let c = f;
  let d = 0;
  for (let n = 1; n < MAX_ITERATIONS; n++) {
    d = 1 / nonZero(bOf(n) + aOf(n) * d);
    c = nonZero(bOf(n) + aOf(n) / c);
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < EPSILON) break;
  }
  return f;
}

/** The x in [low, high] where an increasing `cdf` reaches p, by bisection to 1e-12 of the range. */
function invert(cdf: (x: number) => number, p: number, low: number, high: number): number {
  for (let i = 0; i < 200 && high - low > 1e-12 * Math.max(1, Math.abs(high)); i++) {
    const middle = (low + high) / 2;
    if (cdf(middle) < p) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}

/** The p-quantile of Beta(a, b). */
export const betaQuantile = (p: number, a: number, b: number): number => invert((x) => betaI(a, b, x), p, 0, 1);

/** The p-quantile of Gamma(shape, rate). */
export function gammaQuantile(p: number, shape: number, rate: number): number {
  let high = (shape + 10 * Math.sqrt(shape) + 10) / rate;
  while (gammaP(shape, high * rate) < p) high *= 2;
  return invert((x) => gammaP(shape, x * rate), p, 0, high);
}
