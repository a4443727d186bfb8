/**
 * What the run creates through the front door before it attacks, and removes afterwards: real
 * resources for path parameters to name (so handlers get past their 404s), and extra personal
 * API keys, because the management API allows each key a fixed number of requests a minute.
 */
import type { Fixtures } from './cases.js';
import type { KeyIssuer } from './key-issuer.js';

export interface Target {
  frontUrl: string;
  projectId: number;
  projectApiKey: string;
  personalApiKey: string;
  /** Makes the extra keys (no personal key may manage keys through the API); without it the run uses the target's key alone. */
  keys?: KeyIssuer;
}

export interface Setup {
  fixtures: Fixtures;
  /** Keys to authenticate with, in turn; the target's own key when more could not be made. */
  keys: string[];
  /** Undoes what setup and the run created. */
  teardown: (created: Created) => Promise<void>;
}

/** Resources the attack itself created (a hostile body can still be a valid one), to delete afterwards. */
export interface Created {
  flags: Set<number>;
  cohorts: Set<number>;
  dashboards: Set<number>;
  keys: Set<string>;
}

export const emptyCreated = (): Created => ({ flags: new Set(), cohorts: new Set(), dashboards: new Set(), keys: new Set() });

async function call(target: Target, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${target.frontUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.personalApiKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not every answer has a body (204).
  }
  return { status: response.status, json };
}

/** How many keys keep the run under the rate limit, for a run of about `requests` management calls in a few minutes. */
const ROTATION_KEYS = 24;

export async function setUp(target: Target, tag: string, log: (line: string) => void): Promise<Setup> {
  const project = `/api/environments/${target.projectId}`;
  const fixtures: Fixtures = { projectId: target.projectId, projectApiKey: target.projectApiKey };
  const created = emptyCreated();

  const flag = await call(target, 'POST', `${project}/feature_flags/`, { key: `hostile-fixture-${tag}`, name: 'hostile fixture', filters: { groups: [{ properties: [], rollout_percentage: 10 }] } });
  if (flag.status === 201) created.flags.add((fixtures.flagId = flag.json.id));
  const cohort = await call(target, 'POST', `${project}/cohorts/`, {
    name: `hostile fixture ${tag}`,
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', type: 'person', operator: 'icontains', value: 'example' }] }] } },
  });
  if (cohort.status === 201) created.cohorts.add((fixtures.cohortId = cohort.json.id));
  const dashboard = await call(target, 'POST', `${project}/dashboards/create_from_template_json/`, {
    name: `hostile fixture ${tag}`,
    template: { template_name: 'hostile', tiles: [{ name: 'tile', query: { kind: 'TrendsQuery' } }] },
  });
  if (dashboard.status === 200) created.dashboards.add((fixtures.dashboardId = dashboard.json.id));
  const members = await call(target, 'GET', '/api/organizations/@current/members/');
  if (members.status === 200) fixtures.userUuid = members.json.results?.[0]?.user?.uuid;
  const projectInfo = await call(target, 'GET', `/api/projects/${target.projectId}/`);
  if (projectInfo.status === 200) fixtures.organizationId = projectInfo.json.organization;

  // A person to name: identify one and wait briefly for ingest; without it, person ids are guessed.
  const distinctId = `hostile-fixture-${tag}`;
  await fetch(`${target.frontUrl}/capture/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: target.projectApiKey, event: '$identify', distinct_id: distinctId, properties: { $set: { email: 'hostile@example.test' } } }),
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && fixtures.personId === undefined) {
    const persons = await call(target, 'GET', `${project}/persons/?distinct_id=${encodeURIComponent(distinctId)}`);
    fixtures.personId = persons.json?.results?.[0]?.id;
    if (fixtures.personId === undefined) await new Promise((resolve) => setTimeout(resolve, 500));
  }

  const keys: string[] = [];
  if (target.keys) {
    const victim = await target.keys.issue(`hostile victim ${tag}`.slice(0, 40), ['query:read']);
    created.keys.add((fixtures.victimKeyId = victim.id));
    for (let i = 0; i < ROTATION_KEYS; i++) {
      const key = await target.keys.issue(`hostile ${tag} ${i}`.slice(0, 40), ['*']);
      created.keys.add(key.id);
      keys.push(key.value);
    }
  } else {
    log('hostile: no key issuer given; the rate limit will answer many requests with 429');
    keys.push(target.personalApiKey);
  }
  log(`hostile: fixtures ${JSON.stringify(fixtures)}; ${keys.length} keys to rotate`);

  return {
    fixtures,
    keys,
    teardown: async (byRun) => {
      const remove = async (path: string) => {
        await call(target, 'DELETE', path).catch(() => undefined);
      };
      for (const id of new Set([...created.flags, ...byRun.flags])) await remove(`${project}/feature_flags/${id}/`);
      for (const id of new Set([...created.cohorts, ...byRun.cohorts])) await remove(`${project}/cohorts/${id}/`);
      for (const id of new Set([...created.dashboards, ...byRun.dashboards])) await remove(`${project}/dashboards/${id}/`);
      if (fixtures.personId !== undefined) await remove(`${project}/persons/${fixtures.personId}/`);
      for (const id of new Set([...created.keys, ...byRun.keys])) await target.keys?.revoke(id).catch(() => undefined);
    },
  };
}
