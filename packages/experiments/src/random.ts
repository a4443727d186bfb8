/** A source of uniform numbers in [0, 1), passed in so that every reading is reproducible. */
export type Random = () => number;

/** mulberry32: a small seeded generator, good enough for Monte Carlo over a few posteriors. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box-Muller; the uniform is kept off 0 so the log is finite). */
function normal(random: Random): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A Gamma(shape, rate) draw: Marsaglia and Tsang's method, boosted for shapes below 1. */
export function sampleGamma(shape: number, rate: number, random: Random): number {
  if (shape < 1) return sampleGamma(shape + 1, rate, random) * Math.pow(1 - random(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal(random);
    const v = Math.pow(1 + c * x, 3);
    if (v <= 0) continue;
    const u = 1 - random();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return (d * v) / rate;
  }
}

/** A Beta(a, b) draw, as the share of two Gamma draws. */
export function sampleBeta(a: number, b: number, random: Random): number {
  const x = sampleGamma(a, 1, random);
  return x / (x + sampleGamma(b, 1, random));
}
