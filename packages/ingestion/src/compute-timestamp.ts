export interface TimestampInput {
  /** The event's `timestamp` field as sent. */
  timestamp: unknown;
  /** The event's `offset` field (milliseconds before `now`). */
  offset: unknown;
  sentAt: Date | null;
  /** Capture's receive time. */
  now: Date;
}

export interface TimestampWarning {
  type: 'ignored_invalid_timestamp' | 'event_timestamp_in_future';
  details: Record<string, unknown>;
}

export interface ComputedTimestamp {
  timestamp: Date;
  warning?: TimestampWarning;
}

const FUTURE_LIMIT_MS = 23 * 60 * 60 * 1000;
// ClickHouse's DateTime starts at the Unix epoch; an earlier time cannot be stored, and one such
// row would make every insert of its chunk fail.
const EARLIEST_MS = 0;

function parse(value: unknown): Date | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * PostHog's event time: the client's timestamp corrected for clock skew by `sent_at`, or
 * `now - offset`; never more than 23 hours ahead of `now`; `now` when unparsable or before 1970
 * (which the store cannot hold), with a warning.
 */
export function computeTimestamp(input: TimestampInput): ComputedTimestamp {
  const { now, sentAt } = input;
  let timestamp = now;
  let warning: TimestampWarning | undefined;
  if (input.timestamp !== undefined && input.timestamp !== null) {
    const parsed = parse(input.timestamp);
    if (parsed) timestamp = sentAt ? new Date(now.getTime() + (parsed.getTime() - sentAt.getTime())) : parsed;
    else warning = { type: 'ignored_invalid_timestamp', details: { timestamp: input.timestamp } };
  }
  if (typeof input.offset === 'number' && Number.isFinite(input.offset)) timestamp = new Date(now.getTime() - input.offset);
  if (Number.isNaN(timestamp.getTime()) || timestamp.getTime() < EARLIEST_MS) {
    warning = { type: 'ignored_invalid_timestamp', details: { timestamp: input.timestamp ?? null, offset: input.offset ?? null, reason: 'before 1970-01-01' } };
    timestamp = now;
  }
  if (timestamp.getTime() - now.getTime() > FUTURE_LIMIT_MS) {
    warning = { type: 'event_timestamp_in_future', details: { timestamp: timestamp.toISOString(), now: now.toISOString() } };
    timestamp = now;
  }
  return warning ? { timestamp, warning } : { timestamp };
}
