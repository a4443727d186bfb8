import { useApi } from '../../api/test/api-harness.js';
import { startSdkServices } from '../../capture/test/sdk-services.js';

/**
 * `format` on every endpoint: JSON is the answer unless a route writes CSV, so a format nothing
 * answers in (`xml`) is a 400 naming `format`, never JSON handed back as if it were XML.
 */
const setup = useApi();
let sdk: Awaited<ReturnType<typeof startSdkServices>>;

beforeAll(async () => {
  sdk = await startSdkServices();
});

afterAll(async () => {
  await sdk.close();
});

describe('the format query parameter', () => {
  const endpoints = () => {
    const { api, tenant } = setup;
    const project = `/api/environments/${tenant.project.id}`;
    const auth = { authorization: `Bearer ${tenant.personalApiKey}` };
    return [
      { url: `${api.url}${project}/events/`, init: { headers: auth } },
      { url: `${api.url}${project}/persons/`, init: { headers: auth } },
      { url: `${api.url}${project}/feature_flags/`, init: { headers: auth } },
      { url: `${api.url}/api/projects/`, init: { headers: auth } },
      { url: `${api.url}/_health`, init: {} },
      { url: `${sdk.capture.url}/e/`, init: { method: 'POST', body: '{}' } },
      { url: `${sdk.capture.url}/batch/`, init: { method: 'POST', body: '{}' } },
      { url: `${sdk.decide.url}/decide/?v=3`, init: { method: 'POST', body: '{}' } },
      { url: `${sdk.decide.url}/flags/?v=2`, init: { method: 'POST', body: '{}' } },
    ];
  };
  const withFormat = (url: string, format: string) => `${url}${url.includes('?') ? '&' : '?'}format=${format}`;

  it('refuses format=xml on every endpoint, api and SDK alike, with a 400 naming format', async () => {
    for (const { url, init } of endpoints()) {
      const response = await fetch(withFormat(url, 'xml'), init);
      expect({ url, status: response.status }).toEqual({ url, status: 400 });
      expect(await response.json()).toMatchObject({ type: 'invalid_request', code: 'invalid_format', attr: 'format' });
    }
  });

  it('answers format=json as without it, and refuses csv on the SDK endpoints, which write only JSON', async () => {
    for (const { url, init } of endpoints()) {
      const [plain, json] = await Promise.all([fetch(url, init), fetch(withFormat(url, 'json'), init)]);
      expect({ url, status: json.status }).toEqual({ url, status: plain.status });
      if (url.startsWith(setup.api.url)) continue;
      expect((await fetch(withFormat(url, 'csv'), init)).status).toBe(400);
    }
    // Events and persons write CSV.
    const events = await fetch(withFormat(endpoints()[0]!.url, 'csv'), endpoints()[0]!.init);
    expect(events.headers.get('content-type')).toMatch(/^text\/csv/);
  });
});
