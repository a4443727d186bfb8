import { DESTINATION_CONFIG_SCHEMAS, EXPORT_INTERVALS, type DestinationType, type ExportInterval, type NewBatchExport } from '@tributary/batch-exports';
import { badRequest, bodySchemas, validate } from '@tributary/http';

const DESTINATION_TYPES = Object.keys(DESTINATION_CONFIG_SCHEMAS) as DestinationType[];
const ISO_MOMENT = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:?\\d{2})?)?$';
const moment = { type: ['string', 'null'], pattern: ISO_MOMENT, description: 'an ISO 8601 moment; UTC unless it says otherwise' } as const;

const destination = {
  type: 'object',
  required: ['type', 'config'],
  properties: { type: { type: 'string', enum: DESTINATION_TYPES }, config: { type: 'object' } },
} as const;

export const { create: createBatchExportSchema, patch: patchBatchExportSchema } = bodySchemas(
  { name: { type: 'string', minLength: 1, maxLength: 400 }, destination, interval: { type: 'string', enum: EXPORT_INTERVALS }, start_at: moment, end_at: moment },
  {
    required: ['name', 'destination', 'interval'],
    createOnly: { model: { type: 'string', enum: ['events', 'persons'], default: 'events' }, paused: { type: 'boolean', default: false } },
    // A patch may change the destination's config alone.
    patchOnly: { destination: { ...destination, required: ['type'] } },
  },
);

export const backfillSchema = {
  type: 'object',
  required: ['start_at', 'end_at'],
  properties: { start_at: { type: 'string', pattern: ISO_MOMENT }, end_at: { type: 'string', pattern: ISO_MOMENT } },
};

interface RawExport {
  name: string;
  model: NewBatchExport['model'];
  destination: { type: DestinationType; config: Record<string, unknown> };
  interval: ExportInterval;
  paused: boolean;
  start_at?: string | null;
  end_at?: string | null;
}

/** A moment without an offset is UTC, as every window is; a 400 names the field of one that is no date. */
function dateOf(value: string | null | undefined, attr: string): Date | null {
  if (!value) return null;
  let text = value.replace(' ', 'T');
  if (!text.includes('T')) text += 'T00:00:00';
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) text += 'Z';
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw badRequest(`${attr} is not a date: ${JSON.stringify(value)}.`, attr);
  return date;
}

/** A destination's config checked against its type's schema, defaults filled in; a 400 names the field. */
function checkedDestination(type: DestinationType, config: Record<string, unknown>): NewBatchExport['destination'] {
  return { type, config: validate<Record<string, unknown>>(DESTINATION_CONFIG_SCHEMAS[type], structuredClone(config), 'destination.config') };
}


export function parseCreateBatchExport(raw: unknown): NewBatchExport {
  const body = validate<RawExport>(createBatchExportSchema, structuredClone(raw ?? {}));
  const fields: NewBatchExport = {
    name: body.name,
    model: body.model,
    destination: checkedDestination(body.destination.type, body.destination.config),
    interval: body.interval,
    paused: body.paused,
    start_at: dateOf(body.start_at, 'start_at'),
    end_at: dateOf(body.end_at, 'end_at'),
  };
  if (fields.start_at && fields.end_at && fields.start_at >= fields.end_at) throw badRequest('start_at must be before end_at.', 'end_at');
  return fields;
}

/**
 * The changes of a PATCH. A destination's config is merged into the stored one, so that its
 * secrets (which are never answered back) need not be sent again; a new type replaces it whole.
 */
export function parsePatchBatchExport(raw: unknown, current: { destination_type: DestinationType; destination_config: Record<string, unknown> }): Partial<NewBatchExport> {
  const body = validate<Partial<RawExport> & { destination?: { type: DestinationType; config?: Record<string, unknown> } }>(patchBatchExportSchema, structuredClone(raw ?? {}));
  const changes: Partial<NewBatchExport> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.interval !== undefined) changes.interval = body.interval;
  if (body.start_at !== undefined) changes.start_at = dateOf(body.start_at, 'start_at');
  if (body.end_at !== undefined) changes.end_at = dateOf(body.end_at, 'end_at');
  if (body.destination) {
    const base = body.destination.type === current.destination_type ? current.destination_config : {};
    changes.destination = checkedDestination(body.destination.type, { ...base, ...body.destination.config });
  }
  return changes;
}

/** A backfill's range: past windows only, since a window still being written would be exported short. */
export function parseBackfill(raw: unknown, now: Date): { start: Date; end: Date } {
  const body = validate<{ start_at: string; end_at: string }>(backfillSchema, structuredClone(raw ?? {}));
  const start = dateOf(body.start_at, 'start_at')!;
  const end = dateOf(body.end_at, 'end_at')!;
  if (start >= end) throw badRequest('start_at must be before end_at.', 'end_at');
  if (end > now) throw badRequest('end_at must not be in the future: a backfill exports windows that are over.', 'end_at');
  return { start, end };
}

/** Config fields PostHog never answers back. */
const SECRETS: Record<DestinationType, readonly string[]> = {
  S3: ['aws_access_key_id', 'aws_secret_access_key'],
  Postgres: ['user', 'password'],
  HTTP: ['token'],
};

export function publicConfig(type: DestinationType, config: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(config).filter(([key]) => !SECRETS[type].includes(key)));
}
