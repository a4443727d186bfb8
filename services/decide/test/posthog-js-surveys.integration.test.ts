import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createPool, createTestTenant, frontDoorApi, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { launchChromium, startSite, type HeadlessChromium, type Site } from '../../capture/test/headless-chromium.js';

/**
 * A survey and an early access feature defined through the API, as a site running posthog-js
 * (from npm, given only the host) meets them: the survey pops up, is answered, and its events
 * come back through the events API; the feature is listed for the site's own preview UI.
 */
const config = testConfig();
const front = config.publicUrl.replace(/\/$/, '');
const pool = createPool(config, { max: 2 });
const posthogJs = readFileSync(createRequire(import.meta.url).resolve('posthog-js/dist/array.full.js'));

let tenant: TestTenant;
let site: Site;
let chromium: HeadlessChromium;
const api = frontDoorApi(front, () => tenant);

function pageHtml(): string {
  return `<!doctype html>
<html><head><title>Shop</title><link rel="icon" href="data:,">
<script src="/posthog.js"></script>
<script>
  // Headless Chromium reports itself as a bot, whose events posthog-js drops unless told otherwise.
  posthog.init(${JSON.stringify(tenant.project.api_token)}, { api_host: ${JSON.stringify(front)}, opt_out_useragent_filter: true });
</script>
</head><body><h1>Shop</h1></body></html>`;
}

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  site = await startSite({
    '/posthog.js': { type: 'application/javascript', body: () => posthogJs },
    '/': { type: 'text/html', body: pageHtml },
  });
  chromium = await launchChromium();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await site?.close();
  await pool.end();
});

interface StoredEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, unknown>;
}

async function storedEvents(): Promise<StoredEvent[]> {
  const { results } = (await api('GET', '/events/?limit=100')) as { results: StoredEvent[] };
  return results.map((e) => ({ ...e, properties: typeof e.properties === 'string' ? JSON.parse(e.properties) : e.properties }));
}

describe('posthog-js surveys and early access features in headless Chromium', () => {
  it('shows a survey made through the API, and its shown and sent events arrive with the answer', async () => {
    const question = 'What should we build next?';
    const survey = await api('POST', '/surveys/', {
      name: 'Roadmap',
      type: 'popover',
      questions: [{ type: 'open', question }],
      start_date: new Date().toISOString(),
    });
    const page = await chromium.browser.newPage();
    await page.goto(site.url);

    // posthog-js draws a popover survey in the shadow root of a div named after the survey.
    const shown = await page.waitForFunction(
      (id) => {
        const form = (globalThis as any).document.querySelector(`.PostHogSurvey-${id}`)?.shadowRoot?.querySelector('.ph-survey');
        return form?.textContent ?? false;
      },
      { timeout: 30_000 },
      survey.id,
    );
    expect(await shown.jsonValue()).toContain(question);

    const answer = uniqueName('dark mode');
    await page.evaluate(
      (id, answer) => {
        const input = (globalThis as any).document.querySelector(`.PostHogSurvey-${id}`).shadowRoot.querySelector('textarea');
        input.value = answer;
        input.dispatchEvent(new Event('input', { bubbles: true }));
      },
      survey.id,
      answer,
    );
    await page.evaluate((id) => (globalThis as any).document.querySelector(`.PostHogSurvey-${id}`).shadowRoot.querySelector('.form-submit').click(), survey.id);
    const distinctId = (await page.evaluate(() => (globalThis as any).posthog.get_distinct_id())) as string;

    // The page stays open while the events are awaited: posthog-js sends its queue every few
    // seconds, where a beacon sent as the page closes can be dropped with the page.
    const events = await waitFor(
      async () => {
        const stored = (await storedEvents()).filter((e) => e.properties.$survey_id === survey.id);
        return stored.some((e) => e.event === 'survey shown') && stored.some((e) => e.event === 'survey sent') && stored;
      },
      { what: 'survey shown and survey sent in the events API', timeoutMs: 60_000 },
    );
    await page.close();
    const sent = events.find((e) => e.event === 'survey sent')!;
    expect(sent.distinct_id).toBe(distinctId);
    // posthog-js names each answer after its question's id, which the API gave the question.
    const [asked] = survey.questions as { id: string }[];
    expect(sent.properties).toMatchObject({ $survey_id: survey.id, $survey_name: 'Roadmap', [`$survey_response_${asked!.id}`]: answer, $survey_completed: true });
    expect(events.find((e) => e.event === 'survey shown')!.distinct_id).toBe(distinctId);
  }, 120_000);

  it('lists an early access feature made through the API', async () => {
    await api('POST', '/early_access_features/', { name: 'Dark mode', description: 'Dim it', stage: 'beta' });
    const page = await chromium.browser.newPage();
    await page.goto(site.url);
    const features = await page.evaluate(
      () => new Promise((resolve) => (globalThis as any).posthog.getEarlyAccessFeatures(resolve, true)),
    );
    expect(features).toEqual([expect.objectContaining({ name: 'Dark mode', description: 'Dim it', stage: 'beta', flagKey: 'dark-mode' })]);
    await page.close();
  }, 60_000);
});
