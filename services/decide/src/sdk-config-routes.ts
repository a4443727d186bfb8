import { Router, type Request } from 'express';
import type { TokenResolver } from '@tributary/control-plane';
import { unauthorized } from '@tributary/http';
import { checkToken } from '@tributary/payload';
import type { FlagDefinitions } from './flag-definitions.js';
import type { ProductLists } from './product-lists.js';
import { sdkCors } from '@tributary/sdk-edge';

export interface SdkConfigDeps {
  tokens: Pick<TokenResolver, 'resolve'>;
  definitions: Pick<FlagDefinitions, 'forProject'>;
  products: Pick<ProductLists, 'surveys' | 'hasRunningSurvey' | 'earlyAccessFeatures'>;
}

/** Public, read-only products posthog-js asks for by token that Tributary does not keep: always empty. */
const EMPTY_PRODUCTS: Record<string, Record<string, unknown[]>> = {
  '/api/web_experiments': { experiments: [] },
  '/api/product_tours': { product_tours: [] },
};

export const SDK_CONFIG_PATHS = ['/array/:token/config', '/array/:token/config.js', '/api/surveys', '/api/early_access_features', ...Object.keys(EMPTY_PRODUCTS)];

/** The stages posthog-js asks for (`stage=` repeated); PostHog lists beta features when it names none. */
function stagesOf(raw: unknown): string[] {
  const stages = (Array.isArray(raw) ? raw : [raw]).filter((stage): stage is string => typeof stage === 'string');
  return stages.length > 0 ? stages : ['beta'];
}

/**
 * PostHog's remote config, the settings posthog-js loads before its first flags call. Features
 * Tributary has no store for (recordings, heatmaps, exception autocapture) are off, so the SDK
 * never calls endpoints that would have nothing to answer; `surveys` is true while a survey runs,
 * which makes posthog-js load them from `/api/surveys/`.
 */
export function remoteConfig(token: string, hasFeatureFlags: boolean, surveys = false) {
  return {
    token,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags,
    captureDeadClicks: false,
    capturePerformance: false,
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    logs: { captureConsoleLogs: false },
    sessionRecording: false,
    heatmaps: false,
    conversations: false,
    surveys,
    productTours: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  };
}

/** `/array/:token/config(.js)` and the token-scoped product lists, for browser SDKs on any origin. */
export function sdkConfigRoutes(deps: SdkConfigDeps): Router {
  const router = Router();
  // The config script is loaded with crossorigin="anonymous", so it needs CORS like the JSON.
  router.options(SDK_CONFIG_PATHS, sdkCors);

  async function project(raw: unknown, where: string) {
    const checked = checkToken(raw);
    if (!checked.ok) throw unauthorized(`Project API key is missing or malformed: send it as ${where}.`, 'invalid_api_key');
    const found = await deps.tokens.resolve(checked.token);
    if (!found) throw unauthorized('Project API key is invalid: no project has this key.', 'invalid_api_key');
    return { token: checked.token, id: found.id };
  }

  async function configFor(req: Request) {
    const { token, id } = await project(req.params.token, 'the path segment after /array/');
    // A config without surveys beats none: without it posthog-js loads nothing at all.
    const [defs, surveys] = await Promise.all([deps.definitions.forProject(id), deps.products.hasRunningSurvey(id).catch(() => false)]);
    return remoteConfig(token, defs.flags.some((flag) => flag.active), surveys);
  }

  router.get('/array/:token/config', sdkCors, async (req, res) => {
    res.json(await configFor(req));
  });

  router.get('/array/:token/config.js', sdkCors, async (req, res) => {
    const config = await configFor(req);
    // JSON is valid JavaScript, and escaping `<` keeps a value from closing an inline script.
    const literal = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');
    res
      .type('application/javascript')
      .send(
        `(function(){window._POSTHOG_REMOTE_CONFIG=window._POSTHOG_REMOTE_CONFIG||{};` +
          `window._POSTHOG_REMOTE_CONFIG[${literal(config.token)}]={config:${literal(config)},siteApps:[]};})();`,
      );
  });

  router.get('/api/surveys', sdkCors, async (req, res) => {
    const { id } = await project(req.query.token, 'the query parameter token');
    res.json({ surveys: await deps.products.surveys(id), survey_config: null });
  });

  router.get('/api/early_access_features', sdkCors, async (req, res) => {
    const { id } = await project(req.query.token, 'the query parameter token');
    res.json({ earlyAccessFeatures: await deps.products.earlyAccessFeatures(id, stagesOf(req.query.stage)) });
  });

  for (const [path, empty] of Object.entries(EMPTY_PRODUCTS)) {
    router.get(path, sdkCors, async (req, res) => {
      await project(req.query.token, 'the query parameter token');
      res.json(empty);
    });
  }
  return router;
}
