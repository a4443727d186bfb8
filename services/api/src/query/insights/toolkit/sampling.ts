import { asNumber } from './result-values.js';

/**
 * An insight's `samplingFactor`, as PostHog's API takes it: the share of persons whose events are
 * read (`withSample`), the answer's counts scaled back to the whole as PostHog's
 * `correct_result_for_sampling` does, and the answer marked with the rate it was read at.
 */

export interface Sampled {
  samplingFactor?: number | null;
}

/** The factor a request samples at: above 0 and below 1; none, or 1, reads every event. */
export function samplingFactorOf(request: Sampled): number | null {
  const factor = request.samplingFactor;
  return typeof factor === 'number' && factor > 0 && factor < 1 ? factor : null;
}

/** A count measured on the sample, scaled to all the events and rounded, as PostHog scales it. */
export const scaledCount = (value: number, factor: number | null): number => (factor === null ? value : Math.round(value * (1 / factor)));

/** PostHog's `SamplingRate`, which its web analytics answers carry: the share read, as a fraction. */
export const samplingRate = (factor: number): { numerator: number; denominator: number } => ({ numerator: factor, denominator: 1 });

/** Rows whose `column` counts persons or events of the sample, that column scaled to the whole. */
export function scaledRows(rows: readonly unknown[][], column: number, factor: number | null): readonly unknown[][] {
  if (factor === null) return rows;
  return rows.map((row) => row.map((value, i) => (i === column ? scaledCount(asNumber(value), factor) : value)));
}
