import type { Request } from 'express';
import { notFound } from '@tributary/http';
import { rowId } from '@tributary/postgres/row-id';

/** The `:id` of a route as a row id; 404 naming the resource (`label`) when it cannot be one. */
export function idParam(req: Request, label: string, column: 'integer' | 'bigint' = 'integer'): number {
  const raw = String(req.params.id);
  const id = rowId(raw, column);
  if (id === null) throw notFound(`${label} ${raw} does not exist.`);
  return id;
}
