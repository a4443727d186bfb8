import { STRING_MATCHINGS, selectorRegex, type ActionStep } from '@tributary/hogql';
import { badRequest, bodySchemas, validate } from '@tributary/http';
import { PROPERTY_FILTER_TYPES, PropertyFilterError, propertyFilterProblem } from '@tributary/property-filters';
import type { ActionFields } from './action-store.js';

export type ActionBody = Partial<ActionFields> & { deleted?: boolean };

const text = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;
const matching = { type: ['string', 'null'], enum: [...STRING_MATCHINGS, null] } as const;

/** PostHog's `ActionStepJSON`. */
const step = {
  type: 'object',
  properties: {
    event: text(400),
    url: text(65_535),
    url_matching: { ...matching, default: 'contains' },
    selector: text(65_535),
    tag_name: text(400),
    text: text(65_535),
    text_matching: matching,
    href: text(65_535),
    href_matching: matching,
    properties: { type: ['array', 'null'], maxItems: 100, items: { type: 'object' } },
  },
} as const;

export const { create: createActionSchema, patch: patchActionSchema } = bodySchemas(
  {
    name: { type: 'string', minLength: 1, maxLength: 400 },
    description: { type: 'string', maxLength: 4000 },
    tags: { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 255 } },
    steps: { type: 'array', maxItems: 100, items: step },
    post_to_slack: { type: 'boolean' },
    slack_message_format: { type: 'string', maxLength: 1200 },
    pinned_at: { type: ['string', 'null'], maxLength: 64 },
    deleted: { type: 'boolean' },
  },
  {
    required: ['name'],
    defaults: { description: '', tags: [], steps: [], post_to_slack: false, slack_message_format: '', pinned_at: null, deleted: false },
  },
);

/** Each step's properties and selector, checked as the query layer will read them, so a saved action always prints. */
function checkSteps(steps: readonly ActionStep[], now: Date): void {
  steps.forEach((s, i) => {
    (s.properties ?? []).forEach((filter, j) => {
      const problem = propertyFilterProblem(filter, `steps[${i}].properties[${j}]`, { types: PROPERTY_FILTER_TYPES, now });
      if (problem) throw badRequest(problem.detail, problem.attr);
    });
    // A regular expression runs in ClickHouse (RE2): checked as a regex property filter's value is.
    for (const [key, matching] of [['url', s.url_matching], ['text', s.text_matching], ['href', s.href_matching]] as const) {
      const value = s[key];
      if (matching !== 'regex' || value == null) continue;
      const problem = propertyFilterProblem({ key, value, operator: 'regex' }, `steps[${i}]`, { types: PROPERTY_FILTER_TYPES, now });
      if (problem) throw badRequest(problem.detail.replace(`steps[${i}].value`, `steps[${i}].${key}`), `steps[${i}].${key}`);
    }
    if (s.selector) {
      try {
        selectorRegex(s.selector);
      } catch (error) {
        if (error instanceof PropertyFilterError) throw badRequest(`steps[${i}].selector: ${error.message}.`, `steps[${i}].selector`);
        throw error;
      }
    }
  });
}

/** A step as PostHog answers it: every field of `ActionStepJSON`, null where not given; nothing else is kept. */
function normaliseStep(step: ActionStep): ActionStep {
  return {
    event: step.event ?? null,
    properties: step.properties ?? null,
    selector: step.selector ?? null,
    tag_name: step.tag_name ?? null,
    text: step.text ?? null,
    text_matching: step.text_matching ?? null,
    href: step.href ?? null,
    href_matching: step.href_matching ?? null,
    url: step.url ?? null,
    url_matching: step.url_matching ?? 'contains',
  };
}

export function parseActionBody(raw: unknown, create: boolean, now: Date): ActionBody {
  const body = validate<ActionBody>(create ? createActionSchema : patchActionSchema, structuredClone(raw ?? {}));
  if (create && body.deleted) throw badRequest('An action cannot be created deleted.', 'deleted');
  if (body.pinned_at && Number.isNaN(Date.parse(body.pinned_at))) throw badRequest('pinned_at must be a date and time.', 'pinned_at');
  if (body.name !== undefined && body.name.trim() === '') throw badRequest('name may not be blank.', 'name');
  if (body.steps) checkSteps(body.steps, now);
  return body.steps ? { ...body, steps: body.steps.map(normaliseStep) } : body;
}
