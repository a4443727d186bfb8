import { randomUUID } from 'node:crypto';
import type { Scope } from '@tributary/auth';
import { ControlPlaneStore, MEMBERSHIP_LEVEL, type Project } from '@tributary/control-plane';
import { openApiPath } from '@tributary/http';
import { createKey, createMember, createTestTenant, uniqueName, type TestTenant } from '@tributary/test-support';
import { publicRoutes } from '../src/operations/schema-routes.js';
import { useApi, type ApiHarness } from './api-harness.js';

/**
 * Who may do what (docs/security.md, "Who may do what"): every route the api mounts, asked by
 * each role and narrow key, against the rule this table gives it. A route missing from the table
 * fails the first test, so a new route cannot ship without a rule.
 */

type Rule =
  /** Schema and docs: no key needed. */
  | { public: true }
  /** Installation-wide: an instance operator's unlimited key. */
  | { operator: true }
  /** Managing personal keys: a session's, refused to every personal API key. */
  | { session: true }
  /** The key reads itself. */
  | { keyItself: Scope }
  /** Scopes, and where the caller must stand: in the project, in the organization, or anywhere (lists what they reach). */
  | { scopes: Scope[]; within: 'project' | 'organization' | 'anywhere'; projectAdmin?: true };

const p = (...scopes: Scope[]): Rule => ({ scopes, within: 'project' });
const admin = (...scopes: Scope[]): Rule => ({ scopes, within: 'project', projectAdmin: true });

/** Project routes by their path under `/api/environments/{project_id}` (the `/api/projects/` twins are the same routers). */
const PROJECT_RULES: Record<string, Rule> = {
  'GET /events/': p('query:read'),
  'GET /events/values/': p('query:read'),
  'GET /events/{id}/': p('query:read'),
  'POST /query/': p('query:read'),
  'DELETE /query/{client_query_id}/': p('query:read'),
  'GET /feature_flags/': p('feature_flag:read'),
  'POST /feature_flags/': p('feature_flag:write'),
  'GET /feature_flags/{id}/': p('feature_flag:read'),
  'PATCH /feature_flags/{id}/': p('feature_flag:write'),
  'DELETE /feature_flags/{id}/': p('feature_flag:write'),
  'GET /feature_flags/{id}/access_controls/': p('feature_flag:read'),
  'PUT /feature_flags/{id}/access_controls/': p('feature_flag:write'),
  'GET /dashboards/': p('dashboard:read'),
  'POST /dashboards/': p('dashboard:write'),
  'POST /dashboards/create_from_template_json/': p('dashboard:write'),
  'GET /dashboards/{id}/': p('dashboard:read'),
  'PATCH /dashboards/{id}/': p('dashboard:write'),
  'DELETE /dashboards/{id}/': p('dashboard:write'),
  'GET /dashboards/{id}/access_controls/': p('dashboard:read'),
  'PUT /dashboards/{id}/access_controls/': p('dashboard:write'),
  'GET /insights/': p('insight:read'),
  'POST /insights/': p('insight:write'),
  'GET /insights/{id}/': p('insight:read'),
  'PATCH /insights/{id}/': p('insight:write'),
  'DELETE /insights/{id}/': p('insight:write'),
  'GET /batch_exports/': p('batch_export:read'),
  'POST /batch_exports/': p('batch_export:write'),
  'GET /batch_exports/{id}/': p('batch_export:read'),
  'PATCH /batch_exports/{id}/': p('batch_export:write'),
  'DELETE /batch_exports/{id}/': p('batch_export:write'),
  'POST /batch_exports/{id}/pause/': p('batch_export:write'),
  'POST /batch_exports/{id}/unpause/': p('batch_export:write'),
  'GET /batch_exports/{id}/runs/': p('batch_export:read'),
  'GET /batch_exports/{id}/runs/{run_id}/': p('batch_export:read'),
  'POST /batch_exports/{id}/runs/{run_id}/retry/': p('batch_export:write'),
  'POST /batch_exports/{id}/backfills/': p('batch_export:write'),
  'GET /batch_exports/{id}/backfills/': p('batch_export:read'),
  'POST /batch_exports/{id}/backfill/': p('batch_export:write'),
  'GET /batch_exports/{id}/backfills/{backfill_id}/': p('batch_export:read'),
  'POST /batch_exports/{id}/backfills/{backfill_id}/cancel/': p('batch_export:write'),
  'GET /explicit_members/': p('project:read'),
  'POST /explicit_members/': admin('project:write'),
  'GET /explicit_members/{user_uuid}/': p('project:read'),
  'PATCH /explicit_members/{user_uuid}/': admin('project:write'),
  'DELETE /explicit_members/{user_uuid}/': admin('project:write'),
  'GET /cohorts/': p('cohort:read'),
  'POST /cohorts/': p('cohort:write'),
  'GET /cohorts/{id}/': p('cohort:read'),
  'PATCH /cohorts/{id}/': p('cohort:write'),
  'DELETE /cohorts/{id}/': p('cohort:write'),
  'GET /cohorts/{id}/persons/': p('cohort:read', 'person:read'),
  'PATCH /cohorts/{id}/add_persons_to_static_cohort/': p('cohort:write'),
  'PATCH /cohorts/{id}/remove_person_from_static_cohort/': p('cohort:write'),
  'GET /actions/': p('action:read'),
  'POST /actions/': p('action:write'),
  'GET /actions/{id}/': p('action:read'),
  'PATCH /actions/{id}/': p('action:write'),
  'GET /event_definitions/': p('event_definition:read'),
  'GET /event_definitions/{id}/': p('event_definition:read'),
  'PATCH /event_definitions/{id}/': p('event_definition:write'),
  'DELETE /event_definitions/{id}/': p('event_definition:write'),
  'GET /property_definitions/': p('property_definition:read'),
  'GET /property_definitions/{id}/': p('property_definition:read'),
  'PATCH /property_definitions/{id}/': p('property_definition:write'),
  'DELETE /property_definitions/{id}/': p('property_definition:write'),
  'GET /surveys/': p('survey:read'),
  'POST /surveys/': p('survey:write'),
  'GET /surveys/{id}/': p('survey:read'),
  'PATCH /surveys/{id}/': p('survey:write'),
  'DELETE /surveys/{id}/': p('survey:write'),
  'GET /early_access_features/': p('early_access_feature:read'),
  'POST /early_access_features/': p('early_access_feature:write'),
  'GET /early_access_features/{id}/': p('early_access_feature:read'),
  'PATCH /early_access_features/{id}/': p('early_access_feature:write'),
  'DELETE /early_access_features/{id}/': p('early_access_feature:write'),
  'GET /experiments/': p('experiment:read'),
  'POST /experiments/': p('experiment:write'),
  'GET /experiments/{id}/': p('experiment:read'),
  'PATCH /experiments/{id}/': p('experiment:write'),
  'DELETE /experiments/{id}/': p('experiment:write'),
  'GET /experiments/{id}/results/': p('experiment:read'),
  'GET /groups/': p('group:read'),
  'GET /groups/find/': p('group:read'),
  'GET /groups/property_definitions/': p('group:read'),
  'GET /groups/property_values/': p('group:read'),
  'GET /groups_types/': p('group:read'),
  'PATCH /groups_types/update_metadata/': p('group:write'),
  'GET /annotations/': p('annotation:read'),
  'POST /annotations/': p('annotation:write'),
  'GET /annotations/{id}/': p('annotation:read'),
  'PATCH /annotations/{id}/': p('annotation:write'),
  'DELETE /annotations/{id}/': p('annotation:write'),
  'GET /persons/': p('person:read'),
  'GET /persons/activity/': p('activity_log:read'),
  'GET /persons/cohorts/': p('person:read', 'cohort:read'),
  'POST /persons/bulk_delete/': p('person:write'),
  'GET /persons/{id}/': p('person:read'),
  'PATCH /persons/{id}/': p('person:write'),
  'DELETE /persons/{id}/': p('person:write'),
  'POST /persons/{id}/update_property/': p('person:write'),
  'POST /persons/{id}/delete_property/': p('person:write'),
  'POST /persons/{id}/split/': p('person:write'),
  'GET /persons/{id}/activity/': p('activity_log:read'),
  'GET /persons/{id}/properties_timeline/': p('person:read'),
};

const OTHER_RULES: Record<string, Rule> = {
  'GET /status/': { public: true },
  'GET /api/schema/': { public: true },
  'GET /api/schema/docs/': { public: true },
  'GET /api/schema/docs/assets/{file}/': { public: true },
  'GET /api/status/': { operator: true },
  'GET /api/status/history/': { operator: true },
  'GET /api/personal_api_keys/': { session: true },
  'POST /api/personal_api_keys/': { session: true },
  'GET /api/personal_api_keys/{id}/': { keyItself: 'personal_api_key:read' },
  'DELETE /api/personal_api_keys/{id}/': { session: true },
  'GET /api/projects/': { scopes: ['project:read'], within: 'anywhere' },
  'GET /api/projects/{id}/': { scopes: ['project:read'], within: 'project' },
  'PATCH /api/projects/{id}/': { scopes: ['project:write'], within: 'project' },
  'GET /api/organizations/{organization_id}/members/': { scopes: ['organization_member:read'], within: 'organization' },
};

const PROJECT_BASES = ['/api/environments/{project_id}', '/api/projects/{project_id}'];

function ruleOf(route: string): Rule | undefined {
  const [method, path] = route.split(' ') as [string, string];
  const base = PROJECT_BASES.find((b) => path.startsWith(`${b}/`));
  return base ? PROJECT_RULES[`${method} ${path.slice(base.length)}`] : OTHER_RULES[route];
}

interface Caller {
  name: string;
  key: string;
  /** The tenant's project is one the caller's key reaches. */
  inProject: boolean;
  inOrganization: boolean;
  projectAdmin: boolean;
  operator: boolean;
  scopes: readonly string[];
  unlimited: boolean;
}

/** What the rule lets the caller do: `ok` for any answer that is not a refusal (a missing object is a 404, a bad body a 400). */
function expected(rule: Rule, caller: Caller): { status: 'ok' | 403 | 404; code?: string } {
  const holds = (scopes: readonly string[]) => caller.scopes.includes('*') || scopes.every((s) => caller.scopes.includes(s) || (s.endsWith(':read') && caller.scopes.includes(s.replace(':read', ':write'))));
  if ('public' in rule) return { status: 'ok' };
  if ('session' in rule) return { status: 403, code: 'session_required' };
  if ('operator' in rule) return caller.operator && caller.unlimited ? { status: 'ok' } : { status: 403, code: 'instance_operator_required' };
  if ('keyItself' in rule) return holds([rule.keyItself]) ? { status: 'ok' } : { status: 403, code: 'missing_scope' };
  // Project routes resolve the project before the scopes; the others check the scopes first.
  if (rule.within === 'project' && !caller.inProject) return { status: 403, code: 'project_forbidden' };
  if (!holds(rule.scopes)) return { status: 403, code: 'missing_scope' };
  if (rule.within === 'organization' && !caller.inOrganization) return { status: 404 };
  if (rule.projectAdmin && !caller.projectAdmin) return { status: 403 };
  return { status: 'ok' };
}

let api: ApiHarness;
let tenant: TestTenant;
let sibling: Project;
let callers: Caller[];
let routes: string[];

const setup = useApi({ apiRateLimitPerMinute: 1_000_000 });
beforeAll(async () => {
  ({ api, tenant } = setup);
  const store = new ControlPlaneStore(api.pool, api.config.apiKeyPepper);
  sibling = await store.createProject(tenant.organizationId, uniqueName('sibling'));
  const orgAdmin = await createMember(api.pool, api.config, tenant.organizationId, MEMBERSHIP_LEVEL.admin);
  const member = await createMember(api.pool, api.config, tenant.organizationId, MEMBERSHIP_LEVEL.member);
  const outsider = await createTestTenant(api.pool, api.config);
  const operator = await createTestTenant(api.pool, api.config);
  await store.setInstanceOperator(operator.user.id, true);
  const base = { inProject: true, inOrganization: true, projectAdmin: true, operator: false, scopes: ['*'], unlimited: true };
  const narrow = (scopes: Scope[]) => ({ ...base, name: `key with only ${scopes.join(', ')}`, scopes, unlimited: false });
  callers = [
    { ...base, name: 'owner', key: tenant.personalApiKey },
    { ...base, name: 'admin', key: orgAdmin.personalApiKey },
    { ...base, name: 'member', key: member.personalApiKey, projectAdmin: false },
    { ...base, name: 'outsider', key: outsider.personalApiKey, inProject: false, inOrganization: false, projectAdmin: false },
    { ...base, name: 'operator of another organization', key: operator.personalApiKey, inProject: false, inOrganization: false, projectAdmin: false, operator: true },
    { ...base, name: "owner's key limited to the sibling project", key: await createKey(api.pool, api.config, tenant.user.id, ['*'], [sibling.id]), inProject: false, unlimited: false },
    { ...narrow(['early_access_feature:write']), key: await createKey(api.pool, api.config, tenant.user.id, ['early_access_feature:write']) },
    { ...narrow(['survey:write']), key: await createKey(api.pool, api.config, tenant.user.id, ['survey:write']) },
    { ...narrow(['personal_api_key:write', 'query:read']), key: await createKey(api.pool, api.config, tenant.user.id, ['personal_api_key:write', 'query:read'], [tenant.project.id]) },
  ];
  const schema = await api.request('GET', '/api/schema/', null);
  const decideAndCapture = new Set(publicRoutes().map((r) => `${r.method} ${openApiPath(r.path)}`));
  routes = Object.entries(schema.body.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
    .filter((route) => !decideAndCapture.has(route));
});

/** The route's path with real or harmless values: the tenant's project and organization, ids that name nothing. */
function concrete(route: string): { method: string; path: string } {
  const [method, template] = route.split(' ') as [string, string];
  const values: Record<string, string> = {
    project_id: String(tenant.project.id),
    organization_id: tenant.organizationId,
    file: 'swagger-ui.css',
    client_query_id: randomUUID(),
    user_uuid: randomUUID(),
    run_id: randomUUID(),
    backfill_id: randomUUID(),
    id: template.startsWith('/api/personal_api_keys/') ? '@current' : template.startsWith('/api/projects/{id}') ? String(tenant.project.id) : '999999999',
  };
  return { method, path: template.replace(/\{(\w+)\}/g, (_m, name: string) => values[name]!) };
}

describe('every route has a rule', () => {
  it('the table names each route the api mounts, under both project bases, with the scopes the route documents', async () => {
    expect(routes.length).toBeGreaterThan(150);
    expect(routes.filter((route) => !ruleOf(route))).toEqual([]);
    const schema = await api.request('GET', '/api/schema/', null);
    for (const route of routes) {
      const rule = ruleOf(route)!;
      const [method, path] = route.split(' ') as [string, string];
      const documentedScopes = (schema.body.paths[path][method.toLowerCase()].security[0]?.personalApiKey ?? []) as string[];
      const tableScopes = 'scopes' in rule ? rule.scopes : 'keyItself' in rule ? [rule.keyItself] : 'operator' in rule ? ['*'] : [];
      expect({ route, scopes: documentedScopes }).toEqual({ route, scopes: tableScopes });
    }
  });
});

describe('each role and narrow key against every route and verb', () => {
  it('gets what the table says, in the one error shape when refused', async () => {
    const wrong: string[] = [];
    for (const route of routes.filter((r) => !r.includes('/api/projects/{project_id}/'))) {
      const { method, path } = concrete(route);
      for (const caller of callers) {
        const want = expected(ruleOf(route)!, caller);
        const { status, body } = await api.request(method, path, caller.key);
        const refused = status === 401 || status === 403;
        const matches =
          want.status === 'ok' ? !refused && status < 500 : status === want.status && (want.code === undefined || body?.code === want.code);
        if (!matches) wrong.push(`${caller.name}: ${route} answered ${status} ${body?.code ?? ''}, expected ${want.status} ${want.code ?? ''}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 180_000);
});

describe('the four paths of issue 64', () => {
  const project = () => `/api/environments/${tenant.project.id}`;
  const owner = () => tenant.personalApiKey;
  let member: string;
  beforeAll(async () => {
    member = (await createMember(api.pool, api.config, tenant.organizationId, MEMBERSHIP_LEVEL.member)).personalApiKey;
  });
  const dashboard = async (body: Record<string, unknown> = {}) => (await api.request('POST', `${project()}/dashboards/`, owner(), { name: uniqueName('d'), ...body })).body.id as number;
  const hide = (path: string) => api.request('PUT', `${path}access_controls/`, owner(), { access_level: 'none' });
  const insight = async (dashboards: number[]) =>
    (await api.request('POST', `${project()}/insights/`, owner(), { name: 'owned', query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'x' }] }, dashboards })).body;

  it('1. a member who may only view a dashboard (restriction 37) or not see it (access none) cannot add, rename, move or delete insights on it, nor learn its id', async () => {
    const viewOnly = await dashboard({ restriction_level: 37 });
    const hidden = await dashboard();
    await hide(`${project()}/dashboards/${hidden}/`);
    const onViewOnly = await insight([viewOnly]);
    expect(onViewOnly.dashboards).toEqual([viewOnly]);
    const insights = `${project()}/insights/`;
    const query = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'x' }] };
    expect((await api.request('POST', insights, member, { name: 'mine', query, dashboards: [viewOnly] })).status).toBe(403);
    expect((await api.request('POST', insights, member, { name: 'mine', query, dashboards: [hidden] })).body).toMatchObject({ attr: 'dashboards', detail: `Dashboard ${hidden} does not exist.` });
    expect((await api.request('PATCH', `${insights}${onViewOnly.id}/`, member, { name: 'renamed' })).status).toBe(403);
    expect((await api.request('PATCH', `${insights}${onViewOnly.id}/`, member, { dashboards: [] })).status).toBe(403);
    expect((await api.request('DELETE', `${insights}${onViewOnly.id}/`, member)).status).toBe(403);
    const read = await api.request('GET', `${insights}${onViewOnly.id}/`, member);
    expect(read.body).toMatchObject({ name: 'owned', dashboards: [viewOnly], effective_restriction_level: 37, effective_privilege_level: 21, user_access_level: 'viewer' });

    // An insight on a hidden and an open dashboard: the member edits it, never sees or drops the hidden tile.
    const open = await dashboard();
    const shared = await insight([hidden, open]);
    const seen = await api.request('GET', `${insights}${shared.id}/`, member);
    expect(seen.body.dashboards).toEqual([open]);
    expect(JSON.stringify(seen.body.dashboard_tiles)).not.toContain(`"dashboard_id":${hidden}`);
    expect((await api.request('PATCH', `${insights}${shared.id}/`, member, { name: 'renamed', dashboards: [open] })).status).toBe(200);
    expect((await api.request('GET', `${insights}${shared.id}/`, owner())).body).toMatchObject({ name: 'renamed', dashboards: [hidden, open] });
    expect((await api.request('PATCH', `${insights}${onViewOnly.id}/`, owner(), { name: 'still the owner’s' })).status).toBe(200);
  });

  it('2. a personal key, even one limited to a project, neither lists nor mints nor revokes keys', async () => {
    const limited = await createKey(api.pool, api.config, tenant.user.id, ['personal_api_key:write', 'personal_api_key:read'], [tenant.project.id]);
    const ownId = (await api.request('GET', '/api/personal_api_keys/@current/', owner())).body.id;
    expect((await api.request('GET', '/api/personal_api_keys/', limited)).status).toBe(403);
    expect((await api.request('POST', '/api/personal_api_keys/', limited, { label: 'x', scopes: ['*'] })).status).toBe(403);
    expect((await api.request('DELETE', `/api/personal_api_keys/${ownId}/`, limited)).status).toBe(403);
    expect((await api.request('GET', `/api/personal_api_keys/${ownId}/`, limited)).status).toBe(403);
    expect((await api.request('GET', '/api/personal_api_keys/@current/', limited)).body.scoped_projects).toEqual([tenant.project.id]);
    expect((await api.request('GET', '/api/projects/', owner())).status).toBe(200);
  });

  it('3. instance status is for instance operators: not an unlimited key of an owner, nor of a user in no organization', async () => {
    const store = new ControlPlaneStore(api.pool, api.config.apiKeyPepper);
    const loner = await store.createUser({ email: `${uniqueName('loner')}@example.test` });
    const lonerKey = await createKey(api.pool, api.config, loner.id, ['*']);
    for (const key of [owner(), lonerKey]) {
      for (const path of ['/api/status/history/', '/api/status/']) expect((await api.request('GET', path, key)).body).toMatchObject({ code: 'instance_operator_required' });
    }
    await store.setInstanceOperator(loner.id, true);
    expect((await api.request('GET', '/api/status/history/', lonerKey)).status).toBe(200);
  });

  it('4. a flag hidden from a member, or out of a narrow key\'s scopes, is neither read nor changed through early access features and surveys', async () => {
    const flag = (await api.request('POST', `${project()}/feature_flags/`, owner(), { key: uniqueName('hidden').replace(/[^A-Za-z0-9_-]/g, '-'), filters: { groups: [{ properties: [], rollout_percentage: 10 }] } })).body;
    await hide(`${project()}/feature_flags/${flag.id}/`);
    expect((await api.request('GET', `${project()}/feature_flags/${flag.id}/`, member)).status).toBe(404);
    const attached = await api.request('POST', `${project()}/early_access_features/`, member, { name: uniqueName('feature'), stage: 'beta', feature_flag_id: flag.id });
    expect(attached.body).toMatchObject({ attr: 'feature_flag_id', detail: `Feature flag ${flag.id} does not exist in this project.` });
    const linked = await api.request('POST', `${project()}/surveys/`, member, { name: uniqueName('s'), type: 'popover', questions: [{ type: 'open', question: 'q' }], linked_flag_id: flag.id });
    expect(linked.body).toMatchObject({ attr: 'linked_flag_id' });
    const narrow = await createKey(api.pool, api.config, tenant.user.id, ['early_access_feature:write']);
    expect((await api.request('POST', `${project()}/early_access_features/`, narrow, { name: uniqueName('feature'), stage: 'beta', feature_flag_id: flag.id })).body).toMatchObject({ code: 'missing_scope' });
    expect((await api.request('GET', `${project()}/feature_flags/${flag.id}/`, owner())).body.filters).toEqual({ groups: [{ properties: [], rollout_percentage: 10 }] });

    // A feature the owner made shows its flag to the owner, not to the narrow key.
    const feature = (await api.request('POST', `${project()}/early_access_features/`, owner(), { name: uniqueName('feature'), stage: 'beta' })).body;
    expect(feature.feature_flag).toMatchObject({ key: expect.any(String) });
    expect((await api.request('GET', `${project()}/early_access_features/${feature.id}/`, narrow)).body.feature_flag).toBeNull();
    expect((await api.request('PATCH', `${project()}/early_access_features/${feature.id}/`, narrow, { stage: 'archived' })).body).toMatchObject({ code: 'missing_scope' });

    // A survey's own targeting flag, hidden from the member: not rewritten, stopped or deleted through the survey.
    const targeting = { groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@acme.test' }], rollout_percentage: 100 }] };
    const survey = (await api.request('POST', `${project()}/surveys/`, owner(), { name: uniqueName('s'), type: 'popover', questions: [{ type: 'open', question: 'q' }], targeting_flag_filters: targeting, start_date: '2024-05-01T10:00:00Z' })).body;
    await hide(`${project()}/feature_flags/${survey.targeting_flag.id}/`);
    const surveyPath = `${project()}/surveys/${survey.id}/`;
    expect((await api.request('GET', surveyPath, member)).body.targeting_flag).toBeNull();
    for (const change of [{ targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 5 }] } }, { end_date: '2024-06-01T00:00:00Z' }, { remove_targeting_flag: true }]) {
      expect((await api.request('PATCH', surveyPath, member, change)).status).toBe(403);
    }
    expect((await api.request('DELETE', surveyPath, member)).status).toBe(403);
    const kept = (await api.request('GET', `${project()}/feature_flags/${survey.targeting_flag.id}/`, owner())).body;
    expect(kept).toMatchObject({ active: true, deleted: false, filters: targeting });
    const surveyOnly = await createKey(api.pool, api.config, tenant.user.id, ['survey:write']);
    expect((await api.request('PATCH', surveyPath, surveyOnly, { targeting_flag_filters: targeting })).body).toMatchObject({ code: 'missing_scope' });
  });
});
