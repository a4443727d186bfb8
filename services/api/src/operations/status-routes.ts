import { Router } from 'express';
import type { ControlPlaneStore } from '@tributary/control-plane';
import { documented } from '@tributary/http';
import { requireInstanceOperator } from '../auth/authenticate.js';
import { STATUS_PAGE_HTML } from './status-page.js';
import { statusReport, type StatusDeps, type StatusReport } from './status-report.js';
import { SAMPLE_INTERVAL_MS, type StatusHistory } from './status-history.js';

/** Many open status pages cost the stores one report per interval, not one per page. */
const REPORT_TTL_MS = 2_000;

/** `/status`: the page itself holds no data, so it is public; browsers read the report with a key. */
export function statusPageRoutes(): Router {
  const router = Router();
  router.get('/status', documented({ summary: 'Status page for operators (HTML; reads /api/status/ with a personal API key)', tags: ['operations'], responses: { 200: { description: 'An HTML page.', contentType: 'text/html', schema: { type: 'string' } } } }), (_req, res) => {
    res.type('html').set('Cache-Control', 'no-store').send(STATUS_PAGE_HTML);
  });
  return router;
}

/** `/api/status/`: installation-wide figures (every project's events), for instance operators only. */
export function statusRoutes(deps: StatusDeps, history: StatusHistory, store: Pick<ControlPlaneStore, 'isInstanceOperator'>): Router {
  const router = Router();
  let cached: { at: number; report: Promise<StatusReport> } | null = null;
  const operator = requireInstanceOperator(store);
  router.get(
    '/',
    operator,
    documented({ summary: 'Status report: services, consumer lag, throughput, warnings, dead letters, deletions', tags: ['operations'] }),
    async (_req, res) => {
      const now = Date.now();
      if (!cached || now - cached.at > REPORT_TTL_MS) cached = { at: now, report: statusReport(deps) };
      res.set('Cache-Control', 'no-store').json(await cached.report);
    },
  );
  router.get(
    '/history',
    operator,
    documented({ summary: "The last hour's rates, sampled from the services' metrics: capture events accepted, ingest events written, decide requests, 5xx answers (per second)", tags: ['operations'] }),
    async (_req, res) => {
      res.set('Cache-Control', 'no-store').json({ interval_seconds: SAMPLE_INTERVAL_MS / 1000, series: await history.series() });
    },
  );
  return router;
}
