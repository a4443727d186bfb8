import { randomUUID } from 'node:crypto';
import { badRequest, bodySchemas, validate } from '@tributary/http';

export const SURVEY_TYPES = ['popover', 'widget', 'api', 'external_survey'] as const;
const QUESTION_TYPES = ['open', 'link', 'rating', 'single_choice', 'multiple_choice'] as const;
const URL_MATCH_TYPES = ['regex', 'not_regex', 'exact', 'is_not', 'icontains', 'not_icontains'];

export interface SurveyQuestion {
  id: string;
  type: (typeof QUESTION_TYPES)[number];
  question: string;
  [field: string]: unknown;
}

export interface SurveyConditions {
  linkedFlagVariant?: string | null;
  seenSurveyWaitPeriodInDays?: number | null;
  [field: string]: unknown;
}

/** What a survey's own row holds; its flags are set apart (see SurveyFlagChanges). */
export interface SurveyFields {
  name: string;
  description: string;
  type: (typeof SURVEY_TYPES)[number];
  questions: SurveyQuestion[];
  appearance: Record<string, unknown> | null;
  conditions: SurveyConditions | null;
  linked_flag_id: number | null;
  start_date: string | null;
  end_date: string | null;
  archived: boolean;
  responses_limit: number | null;
  schedule: 'once' | 'recurring' | 'always' | null;
  enable_partial_responses: boolean | null;
}

/** The flag fields of a request: an existing targeting flag, filters for one the survey owns, or its removal. */
export interface SurveyFlagChanges {
  targeting_flag_id?: number | null;
  targeting_flag_filters?: Record<string, unknown> | null;
  remove_targeting_flag?: boolean;
}

export type CreateSurveyBody = SurveyFields & SurveyFlagChanges;
export type PatchSurveyBody = Partial<SurveyFields> & SurveyFlagChanges;

const question = {
  type: 'object',
  required: ['type', 'question'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 200 },
    type: { enum: QUESTION_TYPES },
    question: { type: 'string', minLength: 1, maxLength: 10_000 },
    description: { type: 'string', maxLength: 10_000 },
    descriptionContentType: { enum: ['text', 'html'] },
    choices: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 1000 } },
    // posthog-js opens it on a click, so it is never a `javascript:` URL.
    link: { type: 'string', pattern: '^(https://|mailto:)', description: 'must be an https:// or mailto: link' },
    scale: { type: 'integer', minimum: 1, maximum: 10 },
    optional: { type: 'boolean' },
  },
  // A choice question with nothing to choose could never be answered.
  if: { properties: { type: { enum: ['single_choice', 'multiple_choice'] } } },
  then: { required: ['choices'] },
} as const;

/** The display conditions posthog-js reads; other members are kept as sent. */
const conditions = {
  type: ['object', 'null'],
  properties: {
    url: { type: ['string', 'null'], maxLength: 2000 },
    urlMatchType: { enum: [...URL_MATCH_TYPES, null] },
    selector: { type: ['string', 'null'], maxLength: 2000 },
    seenSurveyWaitPeriodInDays: { type: ['integer', 'null'], minimum: 0, maximum: 36_500 },
    linkedFlagVariant: { type: ['string', 'null'], maxLength: 400 },
    deviceTypes: { type: ['array', 'null'], items: { type: 'string' } },
    deviceTypesMatchType: { enum: [...URL_MATCH_TYPES, null] },
    events: {
      type: ['object', 'null'],
      properties: {
        repeatedActivation: { type: 'boolean' },
        values: { type: 'array', maxItems: 100, items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } },
      },
    },
  },
} as const;

const date = { type: ['string', 'null'], pattern: '^\\d{4}-\\d{2}-\\d{2}', description: 'must be an ISO 8601 date-time or null' } as const;
const flagId = { type: ['integer', 'null'], minimum: 1, maximum: 2_147_483_647 } as const;

const fields = {
  name: { type: 'string', minLength: 1, maxLength: 400 },
  description: { type: 'string', maxLength: 10_000 },
  type: { enum: SURVEY_TYPES },
  questions: { type: 'array', maxItems: 100, items: question },
  appearance: { type: ['object', 'null'] },
  conditions,
  linked_flag_id: flagId,
  targeting_flag_id: flagId,
  targeting_flag_filters: { type: ['object', 'null'] },
  remove_targeting_flag: { type: 'boolean' },
  start_date: date,
  end_date: date,
  archived: { type: 'boolean' },
  responses_limit: { type: ['integer', 'null'], minimum: 0 },
  schedule: { enum: ['once', 'recurring', 'always', null] },
  enable_partial_responses: { type: ['boolean', 'null'] },
} as const;

export const { create: createSurveySchema, patch: patchSurveySchema } = bodySchemas(fields, {
  required: ['name', 'type'],
  defaults: {
    description: '',
    questions: [],
    appearance: null,
    conditions: null,
    linked_flag_id: null,
    start_date: null,
    end_date: null,
    archived: false,
    responses_limit: null,
    schedule: null,
    enable_partial_responses: null,
  },
});

/** A date the pattern let through must still be one, and is kept as its ISO form. */
function checkedDate(value: string | null | undefined, attr: string): string | null | undefined {
  if (value == null) return value;
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw badRequest(`${attr} must be an ISO 8601 date-time or null.`, attr);
  return new Date(time).toISOString();
}

/**
 * Each question keeps its id, or gets one: posthog-js names each answer
 * `$survey_response_<question id>`, so an id must outlive edits to the question.
 */
const withIds = (questions: SurveyQuestion[]) => questions.map((q) => ({ ...q, id: q.id ?? randomUUID() }));

function normalised<T extends PatchSurveyBody>(body: T): T {
  return {
    ...body,
    ...(body.questions && { questions: withIds(body.questions) }),
    ...(body.start_date !== undefined && { start_date: checkedDate(body.start_date, 'start_date') }),
    ...(body.end_date !== undefined && { end_date: checkedDate(body.end_date, 'end_date') }),
  };
}

export const parseCreateSurvey = (raw: unknown) => normalised(validate<CreateSurveyBody>(createSurveySchema, structuredClone(raw ?? {})));
export const parsePatchSurvey = (raw: unknown) => normalised(validate<PatchSurveyBody>(patchSurveySchema, structuredClone(raw ?? {})));
