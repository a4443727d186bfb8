import type { Request, Response } from 'express';
import { stringify } from 'csv-stringify/sync';

/** The absolute URL of another page of the same list, on the public host the client called. */
export function pageUrl(publicUrl: string, req: Request, limit: number, offset: number): string {
  const url = new URL(req.originalUrl, publicUrl);
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('offset', String(offset));
  return url.toString();
}

/** `next` and `previous` of an offset-paginated list whose total is known. */
export function pageLinks(publicUrl: string, req: Request, page: { limit: number; offset: number }, count: number): { next: string | null; previous: string | null } {
  return {
    next: page.offset + page.limit < count ? pageUrl(publicUrl, req, page.limit, page.offset + page.limit) : null,
    previous: page.offset > 0 ? pageUrl(publicUrl, req, page.limit, Math.max(0, page.offset - page.limit)) : null,
  };
}

/** `format=csv`: a header row, then one row each; objects and arrays as JSON in their cell. */
export function sendCsv(res: Response, columns: readonly string[], rows: readonly (readonly unknown[])[]): void {
  res.type('text/csv').send(stringify([[...columns], ...rows.map((row) => row.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v)))]));
}

/** Aborted when the client goes away before the answer was sent, to stop the queries it started. */
export function clientSignal(res: Response): AbortSignal {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableEnded) gone.abort();
  });
  return gone.signal;
}
