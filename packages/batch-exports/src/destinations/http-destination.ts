import http from 'node:http';
import https from 'node:https';
import { CheckedHttpAgent, CheckedHttpsAgent } from '../destination-address/pinned-agents.js';
import { DestinationRefused } from '../destination-address/destination-refused.js';
import type { DestinationGuard } from '../destination-address/destination-guard.js';
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
/** Of an answer that refuses a batch, what the run's error quotes. */
const QUOTED_ANSWER_CHARS = 500;

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
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(
    private readonly config: HttpDestinationConfig,
    guard: DestinationGuard,
    private readonly limits: HttpBatchLimits = DEFAULT_LIMITS,
  ) {
    this.url = new URL(config.url);
    this.name = `HTTP endpoint ${this.url.origin}${this.url.pathname}`;
    this.agent = this.url.protocol === 'https:' ? new CheckedHttpsAgent(guard, { keepAlive: true }) : new CheckedHttpAgent(guard, { keepAlive: true });
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

  /**
   * 5xx and 429 may pass on another attempt; any other refusal will not. A redirect is not
   * followed: where it points was never checked, and a receiver's `/batch/` does not move.
   */
  private async post(body: string): Promise<void> {
    let answer: { status: number; text: string };
    try {
      answer = await this.request(body);
    } catch (error) {
      if (error instanceof DestinationRefused) throw new NonRetryableExportError(this.name, `refused: ${error.message}`, { cause: error });
      throw new ExportError(this.name, describeCause(error), { cause: error });
    }
    const { status, text } = answer;
    if (status >= 200 && status < 300) return;
    if (status >= 300 && status < 400) throw new NonRetryableExportError(this.name, `answered ${status}, a redirect, which is not followed`);
    const cause = `answered ${status}${text ? `: ${text}` : ''}`;
    if (status >= 500 || status === 429) throw new ExportError(this.name, cause);
    throw new NonRetryableExportError(this.name, cause);
  }

  /** The answer's status, and the start of its body where it refused the batch. */
  private request(body: string): Promise<{ status: number; text: string }> {
    const send = this.url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const request = send(this.url, { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }, (response) => {
        const status = response.statusCode ?? 0;
        if (status < 400) {
          response.resume().on('end', () => resolve({ status, text: '' })).on('error', reject);
          return;
        }
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          if (text.length >= QUOTED_ANSWER_CHARS) response.destroy();
        });
        response.on('close', () => resolve({ status, text: text.slice(0, QUOTED_ANSWER_CHARS) }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}
