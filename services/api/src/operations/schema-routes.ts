import { createRequire } from 'node:module';
import path from 'node:path';
import express, { Router, type Express } from 'express';
import { captureRoutes, type CaptureDeps } from '@tributary/capture/routes';
import { flagRoutes, localEvaluationRoutes, sdkConfigRoutes, type DecideService, type LocalEvaluationDeps, type ProductLists, type SdkConfigDeps } from '@tributary/decide/routes';
import { directRouteTable, documented, mountedRoutes, notFound, openApiDocument, type MountedRoute } from '@tributary/http';

const require = createRequire(import.meta.url);
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const { version } = require('../../package.json') as { version: string };

/**
 * Capture's and decide's routes as those services mount them (capture's and decide's flag routes
 * ahead of Express), built only to be read: route factories touch their dependencies when a request
 * comes, never when they are built, and these never see a request.
 */
export function publicRoutes(): MountedRoute[] {
  const app = express();
  app.use(sdkConfigRoutes({} as SdkConfigDeps));
  app.use(localEvaluationRoutes({} as LocalEvaluationDeps));
  return [...mountedRoutes(app), ...directRouteTable([...captureRoutes({} as CaptureDeps), ...flagRoutes({} as DecideService, {} as ProductLists)])];
}

/** The document for everything behind the front door: the api's own routes as mounted, then capture's and decide's. */
export function buildOpenApiDocument(api: Express, publicUrl: string): Record<string, unknown> {
  return openApiDocument([...mountedRoutes(api), ...publicRoutes()], {
    title: 'Tributary',
    version,
    description:
      'PostHog-compatible product analytics. The management API takes a personal API key (`Authorization: Bearer phx_...`) with the scopes listed per operation; ' +
      'capture and flag evaluation take the project API key in the body. Generated from the routes Express has mounted and the ajv schemas they validate with.',
    serverUrl: publicUrl,
  });
}

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tributary API</title>
<link rel="stylesheet" href="assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '../', dom_id: '#ui', deepLinking: true });</script>
</body></html>`;

/** `/api/schema/` (the OpenAPI document) and `/api/schema/docs/` (Swagger UI, served from its npm package): public, as PostHog's are. */
export function schemaRoutes(publicUrl: string): Router {
  const router = Router();
  let document: Record<string, unknown> | null = null;
  router.get('/api/schema', documented({ summary: 'This OpenAPI document', tags: ['schema'] }), (req, res) => {
    // Built on first use, when every route is mounted; routes never change while the process runs.
    document ??= buildOpenApiDocument(req.app as Express, publicUrl);
    res.type('application/vnd.oai.openapi+json').json(document);
  });
  router.get('/api/schema/docs', documented({ summary: 'The OpenAPI document, rendered', tags: ['schema'], responses: { 200: { description: 'An HTML page.', contentType: 'text/html', schema: { type: 'string' } } } }), (req, res) => {
    // Relative asset paths resolve against the trailing slash.
    if (!req.originalUrl.split('?')[0]!.endsWith('/')) return res.redirect(301, '/api/schema/docs/');
    res.type('html').send(DOCS_PAGE);
  });
  router.get(
    '/api/schema/docs/assets/:file',
    documented({ summary: 'A file of Swagger UI, for the rendered document', tags: ['schema'], responses: { 200: { description: 'A stylesheet, script or image.' } } }),
    (req, res, next) => {
      const file = String(req.params.file);
      res.sendFile(file, { root: SWAGGER_UI, maxAge: '1d' }, (error?: Error & { status?: number }) => error && next(error.status === 404 ? notFound(`Swagger UI has no file ${file}.`) : error));
    },
  );
  return router;
}
