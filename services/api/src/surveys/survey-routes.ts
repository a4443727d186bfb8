import { Router, type Request } from 'express';
import type { FeatureFlagStore } from '@tributary/control-plane';
import { PAGE_SCHEMA, documented, notFound, pageOf } from '@tributary/http';
import type { Pool } from '@tributary/postgres';
import { principalOf, projectOf, requireScopes } from '../auth/authenticate.js';
import { pageLinks } from '../http/responses.js';
import { isUuid } from '../http/uuid.js';
import { presentUser, type UserColumns } from '../organizations/organization-user.js';
import { createSurveySchema, parseCreateSurvey, parsePatchSurvey, patchSurveySchema } from './survey-requests.js';
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

function surveyId(req: Request): string {
  const raw = String(req.params.id);
  if (!isUuid(raw)) throw notFound(`Survey ${raw} does not exist.`);
  return raw;
}

/** `/surveys/`: PostHog's survey definitions, with the flags they show through (see SurveyService). */
export function surveyRoutes(deps: { pool: Pool; flags: FeatureFlagStore; publicUrl: string }): Router {
  const router = Router({ mergeParams: true });
  const surveys = new SurveyStore(deps.pool);
  const service = new SurveyService({ surveys, flags: deps.flags });

  router.get('/', requireScopes('survey:read'), documented({ summary: 'List surveys', query: PAGE_SCHEMA }), async (req, res) => {
    const page = pageOf(req);
    const { count, results } = await surveys.list(projectOf(req).id, page.limit, page.offset);
    res.json({ count, ...pageLinks(deps.publicUrl, req, page, count), results: results.map(presentSurvey) });
  });

  router.post('/', requireScopes('survey:write'), documented({ summary: 'Create a survey', body: createSurveySchema }), async (req, res) => {
    const row = await service.create(projectOf(req).id, parseCreateSurvey(req.body), principalOf(req).userId);
    res.status(201).json(presentSurvey(row));
  });

  router.get('/:id', requireScopes('survey:read'), documented({ summary: 'Retrieve a survey' }), async (req, res) => {
    const row = await surveys.get(projectOf(req).id, surveyId(req));
    if (!row) throw notFound(`Survey ${req.params.id} does not exist.`);
    res.json(presentSurvey(row));
  });

  router.patch('/:id', requireScopes('survey:write'), documented({ summary: 'Update a survey (start_date launches it, end_date stops it)', body: patchSurveySchema }), async (req, res) => {
    const id = surveyId(req);
    res.json(presentSurvey(await service.update(projectOf(req).id, id, parsePatchSurvey(req.body), principalOf(req).userId)));
  });

  router.delete('/:id', requireScopes('survey:write'), documented({ summary: 'Delete a survey and the targeting flags it made' }), async (req, res) => {
    await service.delete(projectOf(req).id, surveyId(req));
    res.status(204).end();
  });

  return router;
}
