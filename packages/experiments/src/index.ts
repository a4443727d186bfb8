export { seededRandom, sampleBeta, sampleGamma, type Random } from './random.js';
export { betaQuantile, gammaQuantile } from './special-functions.js';
export {
  readCount,
  readFunnel,
  MAX_VARIANTS,
  MIN_EXPOSURE,
  type BayesianReading,
  type CountVariantStats,
  type FunnelVariantStats,
  type SignificanceCode,
} from './bayesian.js';
