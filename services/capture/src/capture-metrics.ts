import { Counter, type Registry } from '@tributary/http';

/** What capture counts beside its HTTP requests: events it accepted, and those it dropped, by reason. */
export interface CaptureMetrics {
  accepted(count: number, historical: boolean): void;
  dropped(reason: string, count: number): void;
}

export function captureMetrics(registry: Registry): CaptureMetrics {
  const accepted = new Counter({
    name: 'tributary_capture_events_accepted_total',
    help: 'Events Kafka acknowledged, realtime or historical migration.',
    labelNames: ['historical'] as const,
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'tributary_capture_events_dropped_total',
    help: 'Events not accepted: no name or distinct id (still answered 200), unknown project key, or Kafka unavailable (answered 503).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return {
    accepted: (count, historical) => accepted.inc({ historical: String(historical) }, count),
    dropped: (reason, count) => dropped.inc({ reason }, count),
  };
}
