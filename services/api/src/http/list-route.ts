import type { Request, RequestHandler } from 'express';
import { pageOf } from '@tributary/http';
import { projectOf } from '../auth/authenticate.js';
import { pageLinks } from './responses.js';

/** A store that lists a project's rows, one page at a time, with the total. */
export interface ProjectList<Row> {
  list(teamId: number, limit: number, offset: number): Promise<{ count: number; results: Row[] }>;
}

/** `GET /`: the page the query asks for, with its links, each row as `present` shows it to the caller. */
export function listRoute<Row>(publicUrl: string, rows: ProjectList<Row>, present: (req: Request, row: Row) => Promise<unknown>): RequestHandler {
  return async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await rows.list(projectOf(req).id, page.limit, page.offset);
    res.json({ count, ...pageLinks(publicUrl, req, page, count), results: await Promise.all(results.map((row) => present(req, row))) });
  };
}
