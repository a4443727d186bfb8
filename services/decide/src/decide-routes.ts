import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { validate, type DirectRequest, type DirectRoute, type OperationDoc } from '@tributary/http';
import { answeredByCors, decodeSdkPayload, readSdkBody, sdkQuery } from '@tributary/sdk-edge';
import { DECIDE_BODY_SCHEMA, type DecideBody } from './decide-body.js';
import type { DecideService, FlagQuestion } from './decide-service.js';
import { decideResponse, flagsResponse, remoteConfigMembers } from './flag-responses.js';
import type { ProductLists } from './product-lists.js';

const MAX_BODY = 2 * 1024 * 1024;

/** A query parameter as decoding reads it: a repeated one (an array) is not read. */
const queryText = (value: unknown) => (typeof value === 'string' ? value : '');

/** The request as the service takes it: the body is decoded only if no remembered answer is given. */
async function questionOf(request: DirectRequest): Promise<FlagQuestion> {
  const body = await readSdkBody(request, MAX_BODY);
  const { req, query } = request;
  return {
    contentType: req.headers['content-type'],
    contentEncoding: req.headers['content-encoding'],
    data: queryText(query.data),
    compression: queryText(query.compression),
    ip: request.ip(),
    body,
    decode: () => validate<DecideBody>(DECIDE_BODY_SCHEMA, decodeSdkPayload(request, body, sdkQuery(query), MAX_BODY).value),
  };
}

function sendJson(res: ServerResponse, json: Buffer): void {
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(json);
}

/** PostHog's boolean query parameters: `config=true` asks `/flags` for the remote config too. */
const isTrue = (value: unknown) => value === 'true' || value === '1';

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
export function flagRoutes(service: Pick<DecideService, 'answer'>, products: Pick<ProductLists, 'hasRunningSurvey'>): DirectRoute[] {
  const decide = async (request: DirectRequest) => {
    if (answeredByCors(request.req, request.res)) return;
    const { evaluated, errors } = await service.answer(await questionOf(request));
    sendJson(request.res, decideResponse(evaluated, errors, Number(request.query.v ?? 1)));
  };

  const flags = async (request: DirectRequest) => {
    if (answeredByCors(request.req, request.res)) return;
    const { evaluated, errors, token, teamId } = await service.answer(await questionOf(request));
    let config: ReturnType<typeof remoteConfigMembers> | null = null;
    if (isTrue(request.query.config)) {
      // Asked only with the config, as posthog-js asks once a page load; no answer is the config without surveys.
      const surveys = await products.hasRunningSurvey(teamId).catch(() => false);
      config = remoteConfigMembers(token, evaluated.flags.some((flag) => flag.active), surveys);
    }
    sendJson(request.res, flagsResponse(evaluated, { errors, requestId: randomUUID(), evaluatedAt: Date.now(), config }));
  };

  const methods = ['GET', 'POST', 'OPTIONS'] as const;
  return [
    { paths: ['/decide'], methods, handle: decide, doc },
    { paths: ['/flags'], methods, handle: flags, doc },
  ];
}
