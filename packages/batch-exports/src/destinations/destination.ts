import { Ajv } from 'ajv';
import type { DestinationGuard } from '../destination-address/destination-guard.js';
import { NonRetryableExportError } from './export-error.js';
import type { Destination } from './export-part.js';
import { HTTP_CONFIG_SCHEMA, HttpDestination, type HttpDestinationConfig } from './http-destination.js';
import { POSTGRES_CONFIG_SCHEMA, PostgresDestination, type PostgresDestinationConfig } from './postgres-destination.js';
import { S3_CONFIG_SCHEMA, S3Destination, type S3DestinationConfig } from './s3-destination.js';

export type { Destination, EncodedEvent, ExportModel, ExportPart, ExportRecord, WriteResult } from './export-part.js';
export { jsonLine, jsonLineFields, type ColumnKind } from './s3-columns.js';
export { ExportError, NonRetryableExportError } from './export-error.js';
export type { HttpDestinationConfig, PostgresDestinationConfig, S3DestinationConfig };

export type DestinationSpec =
  | { type: 'S3'; config: S3DestinationConfig }
  | { type: 'Postgres'; config: PostgresDestinationConfig }
  | { type: 'HTTP'; config: HttpDestinationConfig };

/**
 * The JSON schema of each destination type's `config`, with PostHog's field names and defaults.
 * Every field a schema leaves out is filled from its `default` when validated with `useDefaults`.
 */
export const DESTINATION_CONFIG_SCHEMAS: Record<DestinationSpec['type'], object> = {
  S3: S3_CONFIG_SCHEMA,
  Postgres: POSTGRES_CONFIG_SCHEMA,
  HTTP: HTTP_CONFIG_SCHEMA,
};

const ajv = new Ajv({ useDefaults: true, allErrors: true });
const validators = Object.fromEntries(Object.entries(DESTINATION_CONFIG_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

/**
 * A destination for a stored export. The config is validated again, with defaults filled in, so
 * one saved before a field existed still works; one that does not validate fails the run at once.
 * Its connections go only where `guard` allows, checked again as each is opened.
 */
export function createDestination(spec: DestinationSpec, guard: DestinationGuard): Destination {
  const validate = validators[spec.type];
  const config: unknown = structuredClone(spec.config);
  if (!validate) throw new NonRetryableExportError(`${spec.type} destination`, 'unknown destination type');
  if (!validate(config)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath.slice(1) || 'config'} ${e.message ?? 'is invalid'}`);
    throw new NonRetryableExportError(`${spec.type} destination`, `invalid config: ${problems.join('; ')}`);
  }
  switch (spec.type) {
    case 'S3':
      return new S3Destination(config as S3DestinationConfig, guard);
    case 'Postgres':
      return new PostgresDestination(config as PostgresDestinationConfig, guard);
    case 'HTTP':
      return new HttpDestination(config as HttpDestinationConfig, guard);
  }
}
