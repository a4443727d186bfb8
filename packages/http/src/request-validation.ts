import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { Request } from 'express';
import { badRequest, type HttpError } from './errors.js';
import { jsonProblem } from './json-problem.js';

/**
 * The one ajv instance. Defaults fill in; nothing is coerced, because a JSON body must say what
 * it means (`"true"` is not `true`); query strings are converted by their schema first (below).
 * `verbose` keeps each error's schema, whose `description` words the message where ajv's would not.
 */
export const AJV_OPTIONS = { useDefaults: true, allowUnionTypes: true, verbose: true } as const;
const ajv = new Ajv(AJV_OPTIONS);
const compiled = new WeakMap<object, ValidateFunction>();

function validator<T>(schema: object): ValidateFunction<T> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate as ValidateFunction<T>;
}

/** `/filters/properties/values/0/key` -> `filters.properties.values[0].key`, how the API names fields. */
function attrOf(pointer: string, property?: string): string {
  const segments = pointer.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (property !== undefined) segments.push(property);
  return segments.reduce((out, segment) => (/^\d+$/.test(segment) ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment), '');
}

/** The first schema violation as a 400 naming the field, under `prefix` when the value was one parameter. */
export function schemaError(errors: ErrorObject[] | null | undefined, prefix = ''): HttpError {
  const error = errors?.[0];
  if (!error) return badRequest('Request is invalid.');
  const pointer = `${prefix ? `/${prefix}` : ''}${error.instancePath}`;
  if (error.keyword === 'required') {
    const attr = attrOf(pointer, (error.params as { missingProperty: string }).missingProperty);
    return badRequest(`${attr} is required.`, attr);
  }
  const attr = attrOf(pointer) || null;
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  if (description) return badRequest(`${attr ?? 'body'} ${description}.`, attr);
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.join(', ');
    return badRequest(`${attr ?? 'body'} must be one of: ${allowed}.`, attr);
  }
  return badRequest(`${attr ?? 'body'} ${error.message ?? 'is invalid'}.`, attr);
}

/** `value` as the schema's type, or a 400 naming the first field that is wrong. Defaults are filled into `value`. */
export function validate<T>(schema: object, value: unknown, prefix = ''): T {
  const check = validator<T>(schema);
  if (!check(value)) throw schemaError(check.errors, prefix);
  return value;
}

/** A request body, copied first so filled-in defaults do not change `req.body`. */
export function validateBody<T>(schema: object, req: Request): T {
  return validate<T>(schema, structuredClone(req.body ?? {}));
}

interface ObjectSchema {
  properties?: Record<string, { type?: string | string[] }>;
}

/** A query string value as its schema's scalar type, where it reads as one; anything else is left for ajv to name. */
function fromQuery(raw: string, type: string | string[] | undefined): unknown {
  const types = Array.isArray(type) ? type : [type];
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (types.includes('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

/** The query string, one value per parameter (the first of repeats), converted and checked by `schema`. */
export function validateQuery<T>(schema: ObjectSchema, req: Request): T {
  const query: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(req.query)) {
    const raw = Array.isArray(value) ? value[0] : value;
    query[key] = typeof raw === 'string' ? fromQuery(raw, schema.properties?.[key]?.type) : raw;
  }
  return validate<T>(schema, query);
}

/** A parameter holding JSON (such as `properties=[...]`), parsed and checked, storable text only; undefined when absent or empty. */
export function validateJsonParam<T>(schema: object, raw: string | undefined, attr: string): T | undefined {
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest(`${attr} must be JSON.`, attr);
  }
  // Written as JSON escapes, U+0000 and unpaired surrogates got past the check of the raw query string (`storableRequest`).
  assertStorable(value, attr);
  return validate<T>(schema, value, attr);
}

/** Refuses a value decoded from a request that holds text no store takes (U+0000, an unpaired surrogate), naming where it is. */
export function assertStorable(value: unknown, attr: string): void {
  const problem = jsonProblem(value, { storable: true, prefix: attr });
  if (problem) throw badRequest(problem.detail, problem.attr);
}

/**
 * The page of a list: `limit` (default 100, at most 1000) and `offset`, at most Postgres's
 * largest integer: a larger one is out of range for the database, not an empty page. Spread into
 * a route's query schema.
 */
export const PAGE_PROPERTIES = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  offset: { type: 'integer', minimum: 0, maximum: 2_147_483_647, default: 0 },
} as const;

export interface Page {
  limit: number;
  offset: number;
}

/** The query string of a plain list: `limit` and `offset`. */
export const PAGE_SCHEMA = { type: 'object' as const, properties: PAGE_PROPERTIES };

/** `limit` and `offset` of a list request, or a 400 naming the bad one. */
export function pageOf(req: Request): Page {
  const { limit, offset } = validateQuery<Page>(PAGE_SCHEMA, req);
  return { limit, offset };
}

/** How a resource's create body differs from its patch body, field by field. */
export interface BodySchemaOptions {
  /** Fields a create must name. */
  required?: readonly string[];
  /** What a create fills in for a field it leaves out; a patch leaves it as it is. */
  defaults?: Record<string, unknown>;
  /** Fields only a create takes, or takes in another shape. */
  createOnly?: Record<string, object>;
  /** Fields only a patch takes, or takes in another shape. */
  patchOnly?: Record<string, object>;
  /** Fields a patch must name. */
  patchRequired?: readonly string[];
}

/**
 * A resource's create and patch body schemas from one list of its fields, so that a limit set on
 * a field holds for both.
 */
export function bodySchemas(fields: Record<string, object>, options: BodySchemaOptions = {}): { create: object; patch: object } {
  const { required = [], defaults = {}, createOnly = {}, patchOnly = {}, patchRequired = [] } = options;
  const createFields = Object.fromEntries(Object.entries(fields).map(([name, schema]) => [name, Object.hasOwn(defaults, name) ? { ...schema, default: defaults[name] } : schema]));
  return {
    create: { type: 'object', ...(required.length > 0 ? { required } : {}), properties: { ...createFields, ...createOnly } },
    patch: { type: 'object', ...(patchRequired.length > 0 ? { required: patchRequired } : {}), properties: { ...fields, ...patchOnly } },
  };
}
