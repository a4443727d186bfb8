import { Router, type Request } from 'express';
import { PAGE_SCHEMA, documented, notFound } from '@tributary/http';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { LinkedFlags } from '../feature-flags/linked-flags.js';
import { listRoute } from '../http/list-route.js';
import { uuidParam } from '../http/uuid.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import type { MinimalFlag } from './minimal-flag.js';
import { isSurveyFlag } from './survey-flags.js';
import { createSurveySchema, parseCreateSurvey, parsePatchSurvey, patchSurveySchema, type PatchSurveyBody } from './survey-requests.js';
import { SurveyService } from './survey-service.js';
import { SurveyStore, type SurveyRow } from './survey-store.js';

/**
 * A survey as PostHog's SurveySerializer answers it. Iterations, response sampling and linked
 * insights are not kept, so their fields are always null.
 */
export function presentSurvey(row: SurveyRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    schedule: row.schedule,
    linked_flag: row.linked_flag,
    linked_flag_id: row.linked_flag?.id ?? null,
    linked_insight_id: null,
    targeting_flag: row.targeting_flag,
    internal_targeting_flag: row.internal_targeting_flag,
    questions: row.questions,
    conditions: row.conditions,
    appearance: row.appearance,
    created_at: row.created_at.toISOString(),
    created_by: row.user_id == null ? null : presentUser(row as UserColumns),
    start_date: row.start_date?.toISOString() ?? null,
    end_date: row.end_date?.toISOString() ?? null,
    archived: row.archived,
    responses_limit: row.responses_limit,
    feature_flag_keys: [
      { key: 'linked_flag_key', value: row.linked_flag?.key ?? null },
      { key: 'targeting_flag_key', value: row.targeting_flag?.key ?? null },
      { key: 'internal_targeting_flag_key', value: row.internal_targeting_flag?.key ?? null },
      { key: 'internal_response_sampling_flag_key', value: null },
    ],
    iteration_count: null,
    iteration_frequency_days: null,
    iteration_start_dates: null,
    current_iteration: null,
    current_iteration_start_date: null,
    enable_partial_responses: row.enable_partial_responses,
  };
}

const surveyId = (req: Request): string => uuidParam(req.params.id, 'Survey');

/**
 * `/surveys/`: PostHog's survey definitions, with the flags they show through (see SurveyService).
 * A flag the caller names (linked or targeting) must be one they may read; rewriting or removing
 * the survey's own targeting flag needs write on it (scope and access control); any change that
 * touches the flags the survey made needs edit access to them; answers show only flags the caller may read.
 */
export function surveyRoutes(deps: { surveys: SurveyStore; surveyService: SurveyService; linkedFlags: LinkedFlags; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const { surveys, surveyService: service, linkedFlags: linked } = deps;
  const madeBySurvey = (flag: MinimalFlag | null) => ({ madeByParent: flag !== null && isSurveyFlag(flag.key) });

  const present = async (req: Request, row: SurveyRow) =>
    presentSurvey({
      ...row,
      linked_flag: await linked.visible(req, row.linked_flag),
      targeting_flag: await linked.visible(req, row.targeting_flag, madeBySurvey(row.targeting_flag)),
      internal_targeting_flag: await linked.visible(req, row.internal_targeting_flag, madeBySurvey(row.internal_targeting_flag)),
    });

  /** Asks for every flag a create (`row` null) or an update reaches, as its part in the change needs. */
  const checkFlags = async (req: Request, body: PatchSurveyBody, row: SurveyRow | null) => {
    if (body.linked_flag_id != null && body.linked_flag_id !== row?.linked_flag?.id) await linked.require(req, body.linked_flag_id, 'viewer', { attr: 'linked_flag_id' });
    if (body.targeting_flag_id != null && body.targeting_flag_id !== row?.targeting_flag?.id) await linked.require(req, body.targeting_flag_id, 'viewer', { attr: 'targeting_flag_id' });
    if (!row) return;
    const own = [row.targeting_flag, row.internal_targeting_flag].filter((flag) => flag !== null && isSurveyFlag(flag.key));
    if (row.targeting_flag && own.includes(row.targeting_flag) && (body.targeting_flag_filters || body.remove_targeting_flag)) {
      await linked.require(req, row.targeting_flag.id, 'editor');
    }
    for (const flag of own) await linked.require(req, flag!.id, 'editor', { madeByParent: true });
  };

  router.get('/', requireScopes('survey:read'), documented({ summary: 'List surveys', query: PAGE_SCHEMA }), listRoute(deps.publicUrl, surveys, present));

  router.post('/', requireScopes('survey:write'), documented({ summary: 'Create a survey (a flag it names must be one the caller may read)', body: createSurveySchema }), async (req, res) => {
    const body = parseCreateSurvey(req.body);
    await checkFlags(req, body, null);
    res.status(201).json(await present(req, await service.create(projectOf(req).id, body, principalOf(req).userId)));
  });

  router.get('/:id', requireScopes('survey:read'), documented({ summary: 'Retrieve a survey' }), async (req, res) => {
    const row = await surveys.get(projectOf(req).id, surveyId(req));
    if (!row) throw notFound(`Survey ${req.params.id} does not exist.`);
    res.json(await present(req, row));
  });

  router.patch('/:id', requireScopes('survey:write'), documented({ summary: 'Update a survey (start_date launches it, end_date stops it)', body: patchSurveySchema }), async (req, res) => {
    const id = surveyId(req);
    const body = parsePatchSurvey(req.body);
    const row = await surveys.get(projectOf(req).id, id);
    if (!row) throw notFound(`Survey ${id} does not exist.`);
    await checkFlags(req, body, row);
    res.json(await present(req, await service.update(projectOf(req).id, id, body, principalOf(req).userId)));
  });

  router.delete('/:id', requireScopes('survey:write'), documented({ summary: 'Delete a survey and the targeting flags it made' }), async (req, res) => {
    const id = surveyId(req);
    const row = await surveys.get(projectOf(req).id, id);
    if (row) await checkFlags(req, {}, row);
    await service.delete(projectOf(req).id, id);
    res.status(204).end();
  });

  return router;
}
