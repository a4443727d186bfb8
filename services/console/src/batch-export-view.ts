/**
 * The Batch exports page's rules, kept pure: what each destination's form asks for and how it is
 * checked before the API is called (the API checks again, and its 400 is shown as it states it),
 * and how a backfill's progress and a run read on screen.
 */
export type DestinationType = 'S3' | 'Postgres' | 'HTTP';
export const DESTINATION_TYPES: DestinationType[] = ['S3', 'Postgres', 'HTTP'];
export const INTERVALS = ['hour', 'day', 'week', 'every 5 minutes'] as const;

export interface Run {
  id: string;
  status: string;
  records_completed: number;
  latest_error: string | null;
  data_interval_start: string | null;
  data_interval_end: string | null;
  backfill: string | null;
}

export interface BatchExport {
  id: string;
  name: string;
  model: 'events' | 'persons';
  destination: { type: DestinationType; config: Record<string, unknown> };
  interval: string;
  paused: boolean;
  latest_runs: Run[];
}

export interface Backfill {
  id: string;
  start_at: string;
  end_at: string;
  status: string;
  progress: { total_runs: number; finished_runs: number; progress: number | null } | null;
  total_records_count: number | null;
  records_completed: number | null;
}

export interface FieldSpec {
  name: string;
  label: string;
  kind?: 'text' | 'password' | 'url' | 'port' | 'select';
  required?: boolean;
  options?: string[];
  initial?: string;
  hint?: string;
  /** Sent even when empty, as the API requires it: an empty value means none. */
  sentEmpty?: boolean;
}

/** PostHog's config field names; the secrets are password inputs. */
export const DESTINATION_FIELDS: Record<DestinationType, FieldSpec[]> = {
  S3: [
    { name: 'bucket_name', label: 'Bucket', required: true },
    { name: 'region', label: 'Region', required: true, initial: 'us-east-1' },
    { name: 'prefix', label: 'Key prefix', hint: 'e.g. events/{year}/{month}/{day}' },
    { name: 'endpoint_url', label: 'Endpoint URL', kind: 'url', hint: 'Leave empty for AWS; an S3-compatible server otherwise' },
    { name: 'aws_access_key_id', label: 'Access key id' },
    { name: 'aws_secret_access_key', label: 'Secret access key', kind: 'password' },
    { name: 'file_format', label: 'File format', kind: 'select', options: ['JSONLines', 'Parquet'], initial: 'JSONLines' },
    { name: 'compression', label: 'Compression', kind: 'select', options: ['', 'gzip', 'brotli'], initial: '' },
  ],
  Postgres: [
    { name: 'host', label: 'Host', required: true },
    { name: 'port', label: 'Port', kind: 'port', initial: '5432' },
    { name: 'database', label: 'Database', required: true },
    { name: 'user', label: 'User', required: true },
    { name: 'password', label: 'Password', kind: 'password', sentEmpty: true },
    { name: 'schema', label: 'Schema', initial: 'public' },
    { name: 'table_name', label: 'Table', required: true, initial: 'events' },
  ],
  HTTP: [
    { name: 'url', label: 'URL', kind: 'url', required: true, hint: "A /batch/ endpoint, e.g. another Tributary's" },
    { name: 'token', label: 'Project token', kind: 'password', required: true },
  ],
};

export const initialFields = (type: DestinationType): Record<string, string> => Object.fromEntries(DESTINATION_FIELDS[type].map((f) => [f.name, f.initial ?? '']));

export interface ExportDraft {
  name: string;
  interval: string;
  model: 'events' | 'persons';
  type: DestinationType;
  fields: Record<string, string>;
}

/** An absolute http(s) URL with a host and no spaces, as the API's destination schemas ask. */
export function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export const isPort = (value: string) => /^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 65535;

/** Each field's problem by its name (`name` for the export's name); empty when the draft can be sent. */
export function draftErrors(draft: ExportDraft): Record<string, string> {
  const errors: Record<string, string> = {};
  if (!draft.name.trim()) errors.name = 'Name is required.';
  for (const field of DESTINATION_FIELDS[draft.type]) {
    const value = (draft.fields[field.name] ?? '').trim();
    if (!value) {
      if (field.required) errors[field.name] = `${field.label} is required.`;
      continue;
    }
    if (field.kind === 'url' && !isHttpUrl(value)) errors[field.name] = `${field.label} must be an http:// or https:// URL.`;
    if (field.kind === 'port' && !isPort(value)) errors[field.name] = `${field.label} must be a whole number from 1 to 65535.`;
  }
  if (draft.type === 'S3' && !draft.fields.aws_access_key_id?.trim() !== !draft.fields.aws_secret_access_key?.trim()) {
    errors.aws_secret_access_key = 'Give both the access key id and the secret, or neither.';
  }
  if (draft.type === 'Postgres' && (draft.fields.table_name ?? '').trim().length > 63) errors.table_name = 'Table must be at most 63 characters.';
  return errors;
}

/** The POST body for a valid draft: empty optional fields are left out, so the API's defaults apply, unless the API requires them. */
export function createBody(draft: ExportDraft) {
  const config: Record<string, unknown> = {};
  for (const field of DESTINATION_FIELDS[draft.type]) {
    const given = draft.fields[field.name] ?? '';
    // A secret is sent as typed: spaces at its ends may be part of it.
    const value = field.kind === 'password' ? given : given.trim();
    if (value === '' && !field.sentEmpty) continue;
    config[field.name] = field.kind === 'port' ? Number(value) : value;
  }
  return { name: draft.name.trim(), interval: draft.interval, model: draft.model, destination: { type: draft.type, config } };
}

/** Where an export writes, in a few words; secrets are never answered back, so never shown. */
export function destinationSummary(destination: BatchExport['destination']): string {
  const c = destination.config;
  if (destination.type === 'S3') return `s3://${String(c.bucket_name ?? '')}/${String(c.prefix ?? '')}`;
  if (destination.type === 'Postgres') return `${String(c.host ?? '')}:${String(c.port ?? 5432)}/${String(c.database ?? '')} ${String(c.schema ?? 'public')}.${String(c.table_name ?? 'events')}`;
  return String(c.url ?? '');
}

/** A backfill's progress as PostHog's object states it: windows done of all, and records. */
export function progressText(backfill: Backfill): string {
  const p = backfill.progress;
  const windows = p && p.total_runs > 0 ? `${p.finished_runs} of ${p.total_runs} windows (${Math.round((p.progress ?? 0) * 100)}%)` : 'no windows yet';
  const done = backfill.records_completed ?? 0;
  const records = backfill.total_records_count === null ? `${done} records` : `${done} of ${backfill.total_records_count} records`;
  return `${windows}, ${records}`;
}

export const isActiveBackfill = (backfill: Backfill) => backfill.status === 'Running' || backfill.status === 'Starting';

/** A past day range, inclusive, as the API's start_at/end_at: whole UTC days, the last one over. */
export function backfillRange(from: string, through: string, now: Date): { body?: { start_at: string; end_at: string }; error?: string } {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  if (!day.test(from) || !day.test(through)) return { error: 'Choose the first and last day.' };
  if (from > through) return { error: 'The first day must not be after the last.' };
  const end = new Date(Date.parse(`${through}T00:00:00Z`) + 86_400_000);
  if (end > now) return { error: 'The last day must be over: choose a day before today (UTC).' };
  return { body: { start_at: `${from}T00:00:00Z`, end_at: end.toISOString().replace('.000Z', 'Z') } };
}

/** A window as UTC minutes, e.g. "2026-11-01 00:00 – 01:00" (the end's date only when it differs). */
export function windowText(run: Pick<Run, 'data_interval_start' | 'data_interval_end'>): string {
  const text = (iso: string | null) => (iso ? iso.slice(0, 16).replace('T', ' ') : '…');
  const start = text(run.data_interval_start);
  const end = text(run.data_interval_end);
  return `${start} – ${end.slice(0, 10) === start.slice(0, 10) ? end.slice(11) : end}`;
}
