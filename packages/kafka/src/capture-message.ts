import { Ajv } from 'ajv';

/**
 * What capture publishes and ingest consumes, one message per event. `data` is the event as
 * the client sent it (after decoding and token/uuid/distinct id normalisation), kept as JSON
 * text so ingest applies every rule to the original payload.
 */
export interface CaptureMessage {
  uuid: string;
  distinct_id: string;
  ip: string | null;
  /** JSON text of the raw event object. */
  data: string;
  /** Capture's receive time, ISO 8601. */
  now: string;
  /** When the client says it sent the request, ISO 8601, if it said so. */
  sent_at: string | null;
  token: string;
  historical_migration: boolean;
}

const schema = {
  type: 'object',
  required: ['uuid', 'distinct_id', 'ip', 'data', 'now', 'sent_at', 'token', 'historical_migration'],
  properties: {
    uuid: { type: 'string', minLength: 1 },
    distinct_id: { type: 'string', minLength: 1 },
    ip: { type: 'string', nullable: true },
    data: { type: 'string' },
    now: { type: 'string', minLength: 1 },
    sent_at: { type: 'string', nullable: true },
    token: { type: 'string', minLength: 1 },
    historical_migration: { type: 'boolean' },
  },
} as const;

const ajv = new Ajv();
const validateCaptureMessage = ajv.compile<CaptureMessage>(schema);

export type DecodeResult = { ok: true; message: CaptureMessage } | { ok: false; reason: string };

/** Parses a message value from the event topics; never throws, so a bad message can be dead-lettered. */
export function decodeCaptureMessage(value: Buffer | string | null): DecodeResult {
  if (value === null) return { ok: false, reason: 'empty message value' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString());
  } catch (error) {
    return { ok: false, reason: `message is not JSON: ${(error as Error).message}` };
  }
  if (!validateCaptureMessage(parsed)) {
    return { ok: false, reason: `message does not match the capture schema: ${ajv.errorsText(validateCaptureMessage.errors)}` };
  }
  return { ok: true, message: parsed };
}

export function encodeCaptureMessage(message: CaptureMessage): string {
  return JSON.stringify(message);
}
