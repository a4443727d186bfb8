import { createHash, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Router } from 'express';
import cors from 'cors';
import getRawBody from 'raw-body';
import { missingScopes } from '@tributary/auth';
import type { ControlPlaneStore, TokenResolver } from '@tributary/control-plane';
import { evaluateFlag, groupsToFetch, needsStoredPerson } from '@tributary/flags';
import { badRequest, forbidden, jsonProblem, payloadTooLarge, unauthorized, validate, type DirectRequest, type DirectRoute, type OperationDoc } from '@tributary/http';
import type { Logger } from '@tributary/logger';
import { assignOwn, checkToken, decodeBody, setOwn } from '@tributary/payload';
import type { DecideMetrics } from './decide-metrics.js';
import { decideResponse, flagsResponse, type Evaluated } from './flag-responses.js';
import { withRequestGroupProperties } from './request-group-properties.js';
import type { EvaluationData, StoredPerson } from './evaluation-data.js';
import type { FlagDefinitions } from './flag-definitions.js';
import type { RememberedAnswers } from './remembered-answers.js';

interface DecideBody {
  api_key?: string;
  token?: string;
  distinct_id: string | number;
  groups?: Record<string, string | number>;
  person_properties?: Record<string, unknown>;
  group_properties?: Record<string, Record<string, unknown>>;
  $anon_distinct_id?: string | number | null;
  /** Server SDKs (posthog-node by default) ask for no location: their address is the server's. */
  geoip_disable?: boolean;
}

const bodySchema = {
  type: 'object',
  required: ['distinct_id'],
  properties: {
    api_key: { type: 'string' },
    token: { type: 'string' },
    distinct_id: { type: ['string', 'number'] },
    groups: { type: 'object', additionalProperties: { type: ['string', 'number'] } },
    person_properties: { type: 'object' },
    group_properties: { type: 'object', additionalProperties: { type: 'object' } },
    $anon_distinct_id: { type: ['string', 'number', 'null'] },
    geoip_disable: { type: 'boolean' },
  },
};

export interface DecideDeps {
  tokens: Pick<TokenResolver, 'known' | 'resolve'>;
  store: Pick<ControlPlaneStore, 'findPersonalApiKey' | 'findProjectByToken' | 'projectsForUser'>;
  definitions: FlagDefinitions;
  data: EvaluationData;
  logger: Logger;
  clock?: () => Date;
  /** `$geoip_*` person properties of the client's address (spec rules 2 and 3). */
  geoip?: (ip: string | undefined) => Record<string, unknown>;
  metrics?: DecideMetrics;
  /** Answers given again to the same request while what they came from is unchanged; none remembered without. */
  answers?: RememberedAnswers;
}

const MAX_BODY = 2 * 1024 * 1024;

/** A query parameter as decoding reads it: a repeated one (an array) is not read. */
const queryText = (value: unknown) => (typeof value === 'string' ? value : '');

async function readRawBody({ req, method }: DirectRequest): Promise<Buffer> {
  try {
    return method === 'POST' ? await getRawBody(req, { limit: MAX_BODY }) : Buffer.alloc(0);
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw payloadTooLarge(`Request body is larger than ${MAX_BODY} bytes.`);
    throw error;
  }
}

function parseDecideBody({ req, query: parsed }: DirectRequest, body: Buffer): DecideBody {
  const query: Record<string, string | undefined> = {};
  // A null-prototype object (node:querystring's), so for-in lists its own keys only.
  for (const key in parsed) {
    const value = parsed[key];
    if (typeof value === 'string') query[key] = value;
  }
  const decoded = decodeBody({ body, contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], query }, { maxBytes: MAX_BODY });
  if (!decoded.ok) throw decoded.error.kind === 'too_large' ? payloadTooLarge(decoded.error.detail) : badRequest(decoded.error.detail, null, decoded.error.kind);
  const nested = jsonProblem(decoded.value);
  if (nested) throw badRequest(nested.detail, nested.attr, 'invalid_payload');
  return validate<DecideBody>(bodySchema, decoded.value);
}

function sendJson(res: ServerResponse, json: Buffer): void {
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(json);
}

const corsMiddleware = cors({ origin: true, credentials: true, maxAge: 86_400 });

/** Sets the CORS headers browsers need on any origin; true when that answered the request (a preflight). */
function answeredByCors({ req, res }: DirectRequest): boolean {
  // What the middleware sets on a request other than a preflight, without the option objects and
  // callbacks it makes per request. Only while no Vary header is set, which it would append to.
  if (req.method !== 'OPTIONS' && !res.hasHeader('vary')) {
    const origin = req.headers.origin;
    if (origin) res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    return false;
  }
  let passedOn = false;
  corsMiddleware(req, res, () => {
    passedOn = true;
  });
  return !passedOn;
}

const doc: OperationDoc = {
  summary: 'Evaluate every flag of the project for one distinct id',
  tags: ['flags'],
  projectKey: true,
  description: '`/decide/?v=3` answers featureFlags and featureFlagPayloads; `/flags/?v=2` answers flags with reasons. Properties in the body override stored ones for this evaluation.',
  body: bodySchema,
};

/**
 * `/decide` (v1-v3) and `/flags` (v2): every flag of the project for one distinct id. Served
 * ahead of Express (direct routes), as these are what every page view of every SDK asks.
 */
export function flagRoutes(deps: DecideDeps): DirectRoute[] {
  const clock = deps.clock ?? (() => new Date());

  /** The remembered answer to this request while its token, definitions and person copy are still the ones held. */
  function remembered(key: string): Evaluated | undefined {
    const answer = deps.answers?.get(key);
    const found =
      answer !== undefined &&
      deps.tokens.known(answer.token)?.id === answer.teamId &&
      deps.definitions.loaded(answer.teamId) === answer.definitions &&
      deps.data.knownPerson(answer.teamId, answer.distinctId)?.properties === answer.personProperties;
    deps.metrics?.cacheLookup('answers', found);
    return found ? { flags: answer.definitions.flags, results: answer.results } : undefined;
  }

  async function evaluate(request: DirectRequest): Promise<{ evaluated: Evaluated; errors: boolean }> {
    const raw = await readRawBody(request);
    const { req, query } = request;
    const key =
      deps.answers?.keyOf({ contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], data: queryText(query.data), compression: queryText(query.compression), ip: request.ip(), body: raw }) ??
      null;
    const again = key === null ? undefined : remembered(key);
    if (again) return { evaluated: again, errors: false };
    const body = parseDecideBody(request, raw);
    const checked = checkToken(body.api_key ?? body.token);
    if (!checked.ok) throw unauthorized(checked.detail, 'invalid_api_key');
    // What is held in process is taken without an await: each costs a turn of the microtask queue.
    const project = deps.tokens.known(checked.token) ?? (await deps.tokens.resolve(checked.token));
    if (!project) throw unauthorized('Project API key is invalid: no project has this key.', 'invalid_api_key');
    const teamId = project.id;
    const distinctId = String(body.distinct_id);
    const groups: Record<string, string> = {};
    if (body.groups) for (const key of Object.keys(body.groups)) setOwn(groups, key, String(body.groups[key]));
    const defs = deps.definitions.loaded(teamId) ?? (await deps.definitions.forProject(teamId));
    let errors = false;

    let stored: StoredPerson | null = null;
    // Only an answer from this process's copy of the person can be checked later (see RememberedAnswers).
    let fromCopy = false;
    try {
      const copy = deps.data.knownPerson(teamId, distinctId);
      fromCopy = copy !== undefined;
      stored = copy ?? (await deps.data.person(teamId, distinctId));
    } catch (error) {
      errors = true;
      deps.logger.warn({ err: error }, 'person properties unavailable');
    }
    const location = body.geoip_disable === true ? undefined : deps.geoip?.(request.ip());
    // Stored, then location, then the request's own: later ones win.
    const personProperties = assignOwn(assignOwn(assignOwn({}, stored?.properties), location), body.person_properties);

    let groupProperties: Record<string, Record<string, unknown>> = {};
    let readGroups = false;
    try {
      const wanted = groupsToFetch(defs.needs, groups, body.group_properties ?? {});
      readGroups = Object.keys(wanted).length > 0;
      if (readGroups) groupProperties = await deps.data.groupProperties(teamId, wanted, defs.groupTypeIndexes);
    } catch (error) {
      errors = true;
      deps.logger.warn({ err: error }, 'group properties unavailable');
    }
    groupProperties = withRequestGroupProperties(groupProperties, body.group_properties);

    let staticCohortIds = new Set<number>();
    // None unless a flag asks for continuity: every flag would look its key up in them.
    let hashKeyOverrides: Record<string, string> | undefined;
    if (stored) {
      try {
        if (defs.needs.staticCohorts) staticCohortIds = await deps.data.staticCohortIds(stored.personId);
        if (defs.continuityKeys.length > 0) {
          const anon = body.$anon_distinct_id === undefined || body.$anon_distinct_id === null ? null : String(body.$anon_distinct_id);
          hashKeyOverrides = await deps.data.hashKeyOverrides(teamId, stored.personId, anon, defs.continuityKeys);
        }
      } catch (error) {
        errors = true;
        deps.logger.warn({ err: error }, 'cohorts or continuity overrides unavailable');
      }
    }

    const context = {
      distinctId,
      personProperties,
      groups,
      groupProperties,
      groupTypeMapping: defs.groupTypeMapping,
      cohorts: defs.cohorts,
      staticCohortIds,
      hashKeyOverrides,
      now: clock(),
    };
    // Without the stored person, a flag that needs its properties cannot be answered truthfully: leave it out.
    const requestPersonProperties = errors ? assignOwn(assignOwn({}, location), body.person_properties) : null;
    const evaluated: Evaluated = { flags: [], results: [] };
    for (const flag of defs.flags) {
      if (requestPersonProperties && needsStoredPerson(flag, requestPersonProperties)) continue;
      evaluated.flags.push(flag);
      evaluated.results.push(evaluateFlag(flag, context));
    }
    // Nothing went into the answer that the checks in `remembered` would not see change. Without
    // errors every flag was evaluated, so the results line up with the definitions' flags.
    if (key !== null && fromCopy && stored && !errors && !readGroups && !defs.needs.clock && !defs.needs.staticCohorts && defs.continuityKeys.length === 0) {
      deps.answers?.remember(key, { token: checked.token, teamId, distinctId, definitions: defs, personProperties: stored.properties, results: evaluated.results.slice() });
    }
    return { evaluated, errors };
  }

  async function answered(request: DirectRequest) {
    const { evaluated, errors } = await evaluate(request);
    let enabled = 0;
    for (const result of evaluated.results) if (result.enabled) enabled++;
    deps.metrics?.evaluated(enabled, evaluated.results.length - enabled);
    return { evaluated, errors };
  }

  const decide = async (request: DirectRequest) => {
    if (answeredByCors(request)) return;
    const { evaluated, errors } = await answered(request);
    sendJson(request.res, decideResponse(evaluated, errors, Number(request.query.v ?? 1)));
  };

  const flags = async (request: DirectRequest) => {
    if (answeredByCors(request)) return;
    const { evaluated, errors } = await answered(request);
    sendJson(request.res, flagsResponse(evaluated, errors, randomUUID()));
  };

  const methods = ['GET', 'POST', 'OPTIONS'] as const;
  return [
    { paths: ['/decide'], methods, handle: decide, doc },
    { paths: ['/flags'], methods, handle: flags, doc },
  ];
}

/** Local evaluation for server SDKs: the definitions themselves, behind a personal API key. */
export function localEvaluationRoutes(deps: Pick<DecideDeps, 'store' | 'definitions'>): Router {
  const router = Router();
  router.get(['/flags/definitions', '/api/feature_flag/local_evaluation'], async (req, res) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
    const key = match ? await deps.store.findPersonalApiKey(match[1]!) : null;
    if (!key) throw unauthorized('Local evaluation needs a personal API key: send it as "Authorization: Bearer <key>".');
    const missing = missingScopes(key.scopes, ['feature_flag:read']);
    if (missing.length > 0) throw forbidden(`This action requires the scope 'feature_flag:read', which this personal API key does not have.`, 'missing_scope');
    const token = typeof req.query.token === 'string' ? req.query.token : '';
    const project = token ? await deps.store.findProjectByToken(token) : null;
    if (!project) throw unauthorized('Query parameter token must be a project API key of a project this key can access.', 'invalid_api_key');
    const reachable = (await deps.store.projectsForUser(key.user_id)).some((p) => p.id === project.id);
    if (!reachable || (key.scoped_projects !== null && !key.scoped_projects.includes(project.id))) throw forbidden(`This personal API key cannot access project ${project.id}.`);
    const defs = await deps.definitions.forProject(project.id);
    const body = JSON.stringify({
      flags: defs.records.map((r) => ({ id: r.id, team_id: r.team_id, name: r.name, key: r.key, filters: r.filters, deleted: r.deleted, active: r.active, ensure_experience_continuity: r.ensure_experience_continuity, version: r.version })),
      group_type_mapping: Object.fromEntries(Object.entries(defs.groupTypeMapping).map(([i, t]) => [String(i), t])),
      cohorts: req.query.send_cohorts !== undefined ? defs.cohortFilters : {},
    });
    const etag = `"${createHash('sha1').update(body).digest('hex')}"`;
    res.set('ETag', etag);
    if (req.get('if-none-match') === etag) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(body);
  });
  return router;
}
