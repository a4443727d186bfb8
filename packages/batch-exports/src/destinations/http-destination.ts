import { EVENT_FILTER_SCHEMA_PROPERTIES, eventFilter, type EventFilterConfig } from './event-filter.js';
import { ExportError, NonRetryableExportError, describeCause } from './export-error.js';
import type { Destination, ExportPart, ExportRecord, WriteResult } from './export-part.js';

/** PostHog's HTTP batch export config (`HttpBatchExportInputs`). */
export interface HttpDestinationConfig extends EventFilterConfig {
  /** Where batches are POSTed: another Tributary's or PostHog's `/batch/`. */
  url: string;
  /** The receiving project's API key, sent as `api_key`. */
  token: string;
}

export const HTTP_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'token'],
  properties: {
    url: { type: 'string', pattern: '^https?://[^\\s]+$' },
    token: { type: 'string', minLength: 1 },
    ...EVENT_FILTER_SCHEMA_PROPERTIES,
  },
} as const;

/** Limits of one request, well inside capture's `/batch/` body limit (CAPTURE_MAX_BATCH_BYTES, 20 MB). */
export interface HttpBatchLimits {
  maxEvents: number;
  maxBytes: number;
}
const DEFAULT_LIMITS: HttpBatchLimits = { maxEvents: 5000, maxBytes: 8 * 1024 * 1024 };
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * An exported event as PostHog's HTTP batch export sends it, a capture event: GeoIP is off, as the
 * properties already hold what the first ingestion added, and autocapture keeps its elements.
 */
export function captureEvent(record: ExportRecord): Record<string, unknown> {
  const properties = { ...((typeof record.properties === 'string' ? JSON.parse(record.properties) : record.properties) as Record<string, unknown> | null) };
  properties.$geoip_disable = true;
  if (record.event === '$autocapture' && record.elements_chain) properties.$elements_chain = record.elements_chain;
  return { uuid: record.uuid, distinct_id: record.distinct_id, timestamp: record.timestamp, event: record.event, properties };
}

/** The body of one request: `{"api_key", "historical_migration": true, "batch"}`, as PostHog sends it. */
export function batchBody(token: string, events: Record<string, unknown>[]): string {
  return JSON.stringify({ api_key: token, historical_migration: true, batch: events });
}

/**
 * POSTs a part's events as capture batches. HTTP gives no way to take back a batch the receiver
 * already stored, so a retried or resumed part is sent again whole: each event keeps its uuid,
 * and the receiver is what makes that once (Tributary's and PostHog's events tables fold an event
 * sent again with the same uuid into the one stored). Exports events only, as PostHog's does.
 */
export class HttpDestination implements Destination {
  private readonly name: string;

  constructor(
    private readonly config: HttpDestinationConfig,
    private readonly limits: HttpBatchLimits = DEFAULT_LIMITS,
  ) {
    this.name = `HTTP endpoint ${new URL(config.url).origin}${new URL(config.url).pathname}`;
  }

  async write(part: ExportPart): Promise<WriteResult> {
    if (part.model !== 'events') throw new NonRetryableExportError(this.name, `the HTTP destination exports events only, not ${part.model}`);
    const records = part.records.filter(eventFilter(part.model, this.config));
    let bytes = 0;
    for (const batch of this.batches(records.map(captureEvent))) {
      const body = batchBody(this.config.token, batch);
      await this.post(body);
      bytes += Buffer.byteLength(body);
    }
    return { records: records.length, bytes };
  }

  private *batches(events: Record<string, unknown>[]): Generator<Record<string, unknown>[]> {
    let batch: Record<string, unknown>[] = [];
    let size = 0;
    for (const event of events) {
      const eventSize = Buffer.byteLength(JSON.stringify(event)) + 1;
      if (batch.length > 0 && (batch.length >= this.limits.maxEvents || size + eventSize > this.limits.maxBytes)) {
        yield batch;
        batch = [];
        size = 0;
      }
      batch.push(event);
      size += eventSize;
    }
    if (batch.length > 0) yield batch;
  }

  /** 5xx and 429 may pass on another attempt; any other refusal will not. */
  private async post(body: string): Promise<void> {
    let response: Response;
    try {
      response = await fetch(this.config.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw new ExportError(this.name, describeCause(error), { cause: error });
    }
    if (response.ok) {
      await response.body?.cancel();
      return;
    }
    const text = (await response.text().catch(() => '')).slice(0, 500);
    const cause = `answered ${response.status}${text ? `: ${text}` : ''}`;
    if (response.status >= 500 || response.status === 429) throw new ExportError(this.name, cause);
    throw new NonRetryableExportError(this.name, cause);
  }

  async close(): Promise<void> {}
}
