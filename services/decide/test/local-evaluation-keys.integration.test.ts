import { startServiceRuntime, type ServiceRuntime } from '@tributary/http';
import { createLogger } from '@tributary/logger';
import { createKey, createTestTenant, testConfig, type TestTenant } from '@tributary/test-support';
import { useApi } from '../../api/test/api-harness.js';
import { buildDecide } from '../src/decide-app.js';

/**
 * Local evaluation takes the management API's credential, so it checks it with the api's own
 * check: every bad key gets the same status and error code from both.
 */
const config = testConfig({ decidePort: 0, host: '127.0.0.1' });
const setup = useApi();
let decide: ServiceRuntime;
let elsewhere: TestTenant;

beforeAll(async () => {
  const { options } = await buildDecide({ config, logger: createLogger('local-evaluation-keys-test', config.logLevel) });
  decide = await startServiceRuntime({ ...options, shutdownTimeoutMs: 1_000 }, false);
  elsewhere = await createTestTenant(setup.api.pool, config);
});

afterAll(async () => {
  await decide.shutdown('test finished');
});

async function answer(url: string, authorization: string | undefined): Promise<{ status: number; code: unknown }> {
  const response = await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
  const body = (await response.json()) as { code?: unknown };
  return { status: response.status, code: body.code };
}

const badKeys: [string, () => Promise<string | undefined>, { status: number; code: string }][] = [
  ['no key', async () => undefined, { status: 401, code: 'not_authenticated' }],
  ['a key without the phx_ prefix', async () => 'Bearer not-a-personal-key', { status: 401, code: 'authentication_failed' }],
  ['a project API key', async () => `Bearer ${setup.tenant.project.api_token}`, { status: 401, code: 'authentication_failed' }],
  ['a phx_ key no one was issued', async () => 'Bearer phx_unknown0000000000000000000000000000000000000', { status: 401, code: 'authentication_failed' }],
  ['a key without feature_flag:read', async () => `Bearer ${await createKey(setup.api.pool, config, setup.tenant.user.id, ['query:read'])}`, { status: 403, code: 'missing_scope' }],
  ['a key limited to another project', async () => `Bearer ${await createKey(setup.api.pool, config, setup.tenant.user.id, ['*'], [elsewhere.project.id])}`, { status: 403, code: 'project_forbidden' }],
  ['the key of a user outside the project', async () => `Bearer ${elsewhere.personalApiKey}`, { status: 403, code: 'project_forbidden' }],
];

describe.each(badKeys)('%s', (_name, authorization, expected) => {
  it('is refused by local evaluation with the status and code the api answers', async () => {
    const header = await authorization();
    const { api, tenant } = setup;
    const fromApi = await answer(`${api.url}/api/projects/${tenant.project.id}/feature_flags/`, header);
    expect(fromApi).toEqual(expected);
    for (const path of ['/api/feature_flag/local_evaluation', '/flags/definitions']) {
      expect(await answer(`http://127.0.0.1:${decide.port}${path}?token=${tenant.project.api_token}`, header)).toEqual(fromApi);
    }
  });
});

test('a good key is answered by both', async () => {
  const { api, tenant } = setup;
  const header = `Bearer ${tenant.personalApiKey}`;
  expect((await answer(`${api.url}/api/projects/${tenant.project.id}/feature_flags/`, header)).status).toBe(200);
  expect((await answer(`http://127.0.0.1:${decide.port}/api/feature_flag/local_evaluation?token=${tenant.project.api_token}`, header)).status).toBe(200);
});
