import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import cors from 'cors';
import getRawBody from 'raw-body';
import { badRequest, jsonProblem, payloadTooLarge, validate, type DirectRequest, type DirectRoute, type OperationDoc } from '@tributary/http';
import { decodeBody } from '@tributary/payload';
import { DECIDE_BODY_SCHEMA, type DecideBody } from './decide-body.js';
import type { DecideService, FlagQuestion } from './decide-service.js';
import { decideResponse, flagsResponse } from './flag-responses.js';

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
  return validate<DecideBody>(DECIDE_BODY_SCHEMA, decoded.value);
}

/** The request as the service takes it: the body is decoded only if no remembered answer is given. */
async function questionOf(request: DirectRequest): Promise<FlagQuestion> {
  const body = await readRawBody(request);
  const { req, query } = request;
  return {
    contentType: req.headers['content-type'],
    contentEncoding: req.headers['content-encoding'],
    data: queryText(query.data),
    compression: queryText(query.compression),
    ip: request.ip(),
    body,
    decode: () => parseDecideBody(request, body),
  };
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
  body: DECIDE_BODY_SCHEMA,
};

/**
 * `/decide` (v1-v3) and `/flags` (v2): every flag of the project for one distinct id. Served
 * ahead of Express (direct routes), as these are what every page view of every SDK asks.
 */
export function flagRoutes(service: Pick<DecideService, 'answer'>): DirectRoute[] {
  const decide = async (request: DirectRequest) => {
    if (answeredByCors(request)) return;
    const { evaluated, errors } = await service.answer(await questionOf(request));
    sendJson(request.res, decideResponse(evaluated, errors, Number(request.query.v ?? 1)));
  };

  const flags = async (request: DirectRequest) => {
    if (answeredByCors(request)) return;
    const { evaluated, errors } = await service.answer(await questionOf(request));
    sendJson(request.res, flagsResponse(evaluated, errors, randomUUID()));
  };

  const methods = ['GET', 'POST', 'OPTIONS'] as const;
  return [
    { paths: ['/decide'], methods, handle: decide, doc },
    { paths: ['/flags'], methods, handle: flags, doc },
  ];
}
