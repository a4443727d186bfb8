import { counterTotal, ratesOf } from './status-history.js';

const EXPOSITION = `# HELP tributary_http_requests_total HTTP requests answered.
# TYPE tributary_http_requests_total counter
tributary_http_requests_total{method="POST",route="/batch",status="200",service="capture"} 11
tributary_http_requests_total{method="POST",route="/batch",status="503",service="capture"} 2
tributary_http_requests_total{method="GET",route="/e",status="500",service="capture"} 1
tributary_http_requests_total_extra{status="500"} 99
tributary_capture_events_accepted_total{historical="true",service="capture"} 4611
tributary_capture_events_accepted_total 90
`;

describe('the status history', () => {
  it('sums a counter over its labelled series, only the 5xx ones when asked, and no other metric sharing its prefix', () => {
    expect(counterTotal(EXPOSITION, 'tributary_capture_events_accepted_total', false)).toBe(4701);
    expect(counterTotal(EXPOSITION, 'tributary_http_requests_total', false)).toBe(14);
    expect(counterTotal(EXPOSITION, 'tributary_http_requests_total', true)).toBe(3);
    expect(counterTotal(EXPOSITION, 'tributary_missing_total', false)).toBe(0);
  });

  it('turns consecutive samples into per-second rates, counting from zero after a restart and leaving gaps where a service did not answer', () => {
    const samples = [
      { at: 0, totals: { capture_events_accepted: 100, decide_requests: 10 } },
      { at: 10_000, totals: { capture_events_accepted: 300, decide_requests: 10 } },
      { at: 20_000, totals: { capture_events_accepted: 50 } },
      { at: 30_000, totals: { capture_events_accepted: 50, decide_requests: 40 } },
    ];
    const byName = Object.fromEntries(ratesOf(samples).map((s) => [s.name, s.points]));
    expect(byName.capture_events_accepted).toEqual([
      { at: 10_000, perSecond: 20 },
      { at: 20_000, perSecond: 5 },
      { at: 30_000, perSecond: 0 },
    ]);
    expect(byName.decide_requests).toEqual([{ at: 10_000, perSecond: 0 }]);
    expect(byName.ingest_events_written).toEqual([]);
  });
});
