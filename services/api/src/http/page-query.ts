import type { Request } from 'express';
import { Ajv } from 'ajv';
import { schemaError } from '../cohorts/cohort-filters.js';

const validatePage = new Ajv({ useDefaults: true }).compile<{ limit: number; offset: number }>({
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 }, offset: { type: 'integer', minimum: 0, default: 0 } },
});

/** `limit` (default 100, at most 1000) and `offset` of a list request, or a 400 naming the bad one. */
export function pageOf(req: Request): { limit: number; offset: number } {
  const page = { limit: req.query.limit === undefined ? undefined : Number(req.query.limit), offset: req.query.offset === undefined ? undefined : Number(req.query.offset) };
  if (!validatePage(page)) schemaError(validatePage.errors);
  return page;
}
