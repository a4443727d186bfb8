import { badRequest, bodySchemas, validate } from '@tributary/http';
import { insightSource } from '../insights/insight-requests.js';
import { BUILT_IN_TEMPLATE_NAMES, builtInTemplate } from './built-in-templates.js';
import type { DashboardTemplate } from './dashboard-template.js';

/** PostHog's restriction levels: 21 everyone in the project can edit, 37 only collaborators. */
export const RESTRICTION_LEVEL = { everyoneCanEdit: 21, onlyCollaboratorsCanEdit: 37 } as const;

export interface CreateDashboardBody {
  name?: string;
  description?: string;
  pinned: boolean;
  deleted: boolean;
  use_template: string;
  use_dashboard?: number;
  delete_insights: boolean;
  tags?: string[];
  restriction_level: number;
  template?: DashboardTemplate;
}

export interface PatchDashboardBody {
  name?: string;
  description?: string;
  pinned?: boolean;
  tags?: string[];
  restriction_level?: number;
  filters?: Record<string, unknown>;
  deleted?: boolean;
  delete_insights: boolean;
}

const name = { type: 'string', maxLength: 400 } as const;
const description = { type: 'string', maxLength: 4000 } as const;
const tags = { type: 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 255 } } as const;
const restrictionLevel = { type: 'integer', enum: Object.values(RESTRICTION_LEVEL) } as const;
const cell = { type: 'integer', minimum: 0, maximum: 1000 } as const;
// Grid positions per breakpoint (`sm`, `xs`), as react-grid-layout stores them.
const layouts = {
  type: 'object',
  additionalProperties: { type: 'object', properties: { x: cell, y: cell, w: cell, h: cell, minW: cell, minH: cell } },
  default: {},
} as const;

const template = {
  type: 'object',
  required: ['template_name', 'tiles'],
  properties: {
    template_name: { ...name, minLength: 1 },
    dashboard_description: { ...description, default: '' },
    dashboard_filters: { type: 'object', default: {} },
    tags: { ...tags, default: [] },
    tiles: {
      type: 'array',
      maxItems: 200,
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          type: { type: 'string', enum: ['INSIGHT'], default: 'INSIGHT' },
          name: { ...name, minLength: 1 },
          description: { ...description, default: '' },
          query: { type: 'object' },
          filters: { type: 'object' },
          layouts,
          color: { type: 'string', nullable: true, maxLength: 40, default: null },
        },
      },
    },
  },
} as const;

export const { create: createDashboardSchema, patch: patchDashboardSchema } = bodySchemas(
  { name, description, pinned: { type: 'boolean' }, deleted: { type: 'boolean' }, delete_insights: { type: 'boolean', default: false }, tags, restriction_level: restrictionLevel },
  {
    defaults: { pinned: false, deleted: false, restriction_level: RESTRICTION_LEVEL.everyoneCanEdit },
    createOnly: { use_template: { type: 'string', default: '' }, use_dashboard: { type: 'integer', minimum: 1, maximum: 999_999_999 }, template },
    patchOnly: { filters: { type: 'object' } },
  },
);

/**
 * A create body, or a 400 naming the first field that is wrong. `use_template` names a built-in
 * template, whose tiles become `template`. `needsSource`: create_from_template_json makes nothing
 * without a template or a dashboard to copy; `POST /dashboards/` makes an empty dashboard.
 */
export function parseCreateBody(raw: unknown, needsSource: boolean): CreateDashboardBody {
  const body = validate<CreateDashboardBody>(createDashboardSchema, structuredClone(raw ?? {}));
  if (body.deleted) throw badRequest('A dashboard cannot be created deleted.', 'deleted');
  if (body.use_template !== '') {
    if (body.template) throw badRequest('Give either template or use_template, not both.', 'use_template');
    body.template = builtInTemplate(body.use_template);
    if (!body.template) throw badRequest(`use_template must name a built-in template (${BUILT_IN_TEMPLATE_NAMES.join(', ')}), or send the template JSON in template.`, 'use_template');
  }
  if (body.template && body.use_dashboard !== undefined) throw badRequest('Give either a template or use_dashboard, not both.', 'use_dashboard');
  if (needsSource && !body.template && body.use_dashboard === undefined) throw badRequest('template is required (or use_dashboard, to copy an existing dashboard).', 'template');
  body.template?.tiles.forEach((tile, i) => {
    if (!tile.query && !tile.filters) throw badRequest(`template.tiles[${i}] needs a query or filters.`, `template.tiles[${i}].query`);
    if (tile.query) insightSource(tile.query, `template.tiles[${i}].query`);
  });
  return body;
}

export function parsePatchBody(raw: unknown): PatchDashboardBody {
  const body = validate<PatchDashboardBody>(patchDashboardSchema, structuredClone(raw ?? {}));
  return body;
}
