import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';
import { createPool, createTestTenant, frontDoorApi, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { launchChromium, startSite, type HeadlessChromium, type Site } from './headless-chromium.js';

/**
 * posthog-js, loaded from its npm package by a page on another origin, in headless Chromium,
 * pointed at the running system's front door (PUBLIC_URL) with nothing changed but the host:
 * what a new user's site does. Every event must come back through the events API with what
 * posthog-js set, the person merged as PostHog merges it, and the flags as the flags API gives.
 */
const config = testConfig();
const front = config.publicUrl.replace(/\/$/, '');
const pool = createPool(config, { max: 2 });
const posthogJs = readFileSync(createRequire(import.meta.url).resolve('posthog-js/dist/array.full.js'));

const checkoutPayloads = { control: '{"color":"grey"}', one: '{"color":"green"}', two: '{"color":"blue"}' };
const flags = [
  {
    key: 'checkout',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'one', rollout_percentage: 33 }, { key: 'two', rollout_percentage: 33 }] },
      payloads: checkoutPayloads,
    },
  },
  { key: 'pro-only', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
];

let tenant: TestTenant;
let site: Site;
let chromium: HeadlessChromium;
const beacons: { url: string; sent: boolean }[] = [];

/** The page a user's site would serve: posthog-js from npm, initialised with only the host. */
function pageHtml(): string {
  return `<!doctype html>
<html><head><title>Shop</title><link rel="icon" href="data:,">
<script>
  // Tells the test which requests went out as beacons, by beacon too: it is what survives unload.
  const sendBeacon = navigator.sendBeacon.bind(navigator);
  navigator.sendBeacon = (url, body) => {
    const sent = sendBeacon(url, body);
    sendBeacon('/beacon-log', JSON.stringify({ url: String(url), sent }));
    return sent;
  };
</script>
<script src="/posthog.js"></script>
<script>
  // The only option besides the host: headless Chromium reports itself as a bot, and posthog-js
  // drops bots' events unless told otherwise (its own advice for end-to-end tests).
  posthog.init(${JSON.stringify(tenant.project.api_token)}, { api_host: ${JSON.stringify(front)}, opt_out_useragent_filter: true });
</script>
</head><body><button id="buy" class="btn primary">Buy now</button><a id="next" href="/next">Next</a></body></html>`;
}

const api = frontDoorApi(front, () => tenant);

interface StoredEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, any>;
  elements_chain: string;
}

async function storedEvents(): Promise<StoredEvent[]> {
  const { results } = (await api('GET', '/events/?limit=100')) as { results: StoredEvent[] };
  return results.map((e) => ({ ...e, properties: typeof e.properties === 'string' ? JSON.parse(e.properties) : e.properties }));
}

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  for (const flag of flags) await api('POST', '/feature_flags/', { name: flag.key, active: true, ...flag });
  await waitFor(
    async () => {
      const response = await fetch(`${front}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: tenant.project.api_token, distinct_id: 'probe' }) });
      return 'pro-only' in ((await response.json()) as { flags: Record<string, unknown> }).flags;
    },
    { what: 'decide to see the new flags' },
  );
  site = await startSite(
    {
      '/posthog.js': { type: 'application/javascript', body: () => posthogJs },
      '/next': { type: 'text/html', body: () => '<!doctype html><title>Next</title><link rel="icon" href="data:,"><p>Thanks</p>' },
      '/': { type: 'text/html', body: pageHtml },
    },
    (req, res) => {
      if (req.url !== '/beacon-log') return void res.writeHead(404).end();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => void beacons.push(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      res.writeHead(204).end();
    },
  );
  chromium = await launchChromium();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await site?.close();
  await pool.end();
});

/** Everything that would show in the browser console or the network panel as a failure. */
function watchFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') failures.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => failures.push(`page error: ${String(error)}`));
  page.on('requestfailed', (request) => failures.push(`failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`));
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()}: ${response.request().method()} ${response.url()}`);
  });
  return failures;
}

describe('posthog-js in headless Chromium against the front door', () => {
  it('events, person merge, groups, flags, surveys and reset work unchanged, over gzip and beacons', async () => {
    const page = await chromium.browser.newPage();
    const failures = watchFailures(page);
    // Straight from the DevTools protocol: puppeteer decodes bodies as text, which loses gzip bytes.
    const requests: { url: string; body: Buffer | undefined }[] = [];
    const devtools = await page.createCDPSession();
    await devtools.send('Network.enable');
    devtools.on('Network.requestWillBeSent', ({ request }) => {
      if (!request.url.startsWith(front)) return;
      const entries = request.postDataEntries?.map((entry) => Buffer.from(entry.bytes ?? '', 'base64'));
      requests.push({ url: request.url, body: entries ? Buffer.concat(entries) : undefined });
    });
    const user = uniqueName('shopper');
    const alias = uniqueName('alias');
    const company = uniqueName('acme');

    await page.goto(site.url);
    await page.waitForFunction(() => (globalThis as any).posthog.__loaded && (globalThis as any).posthog.featureFlags.hasLoadedFlags);
    const anonymous = await page.evaluate(() => ({
      distinctId: (globalThis as any).posthog.get_distinct_id() as string,
      sessionId: (globalThis as any).posthog.get_session_id() as string,
      deviceId: (globalThis as any).posthog.get_property('$device_id') as string,
    }));

    await page.click('#buy');
    await page.evaluate(
      (user, alias, company) => {
        const posthog = (globalThis as any).posthog;
        posthog.identify(user, { email: `${user}@example.test`, plan: 'pro' });
        posthog.alias(alias);
        posthog.group('company', company, { name: 'Acme' });
      },
      user,
      alias,
      company,
    );
    // identify() reloads flags with the new person properties; pro-only turns on when they arrive.
    await page.waitForFunction(() => (globalThis as any).posthog.isFeatureEnabled('pro-only', { send_event: false }) === true);
    const browserFlags = await page.evaluate(() => {
      const posthog = (globalThis as any).posthog;
      return { enabled: posthog.isFeatureEnabled('checkout'), variant: posthog.getFeatureFlag('checkout'), payload: posthog.getFeatureFlagPayload('checkout') };
    });
    // A survey answered in a custom UI: posthog-js sends the same event its own survey widget does.
    await page.evaluate(() => (globalThis as any).posthog.capture('survey sent', { $survey_id: 'survey-1', $survey_response: 'Love it' }));
    const afterReset = await page.evaluate(() => {
      const posthog = (globalThis as any).posthog;
      posthog.reset();
      posthog.capture('after reset');
      return posthog.get_distinct_id() as string;
    });
    // A cross-origin JSON POST is not a simple request: it only goes out after a CORS preflight.
    const preflighted = await page.evaluate(
      async (front, token, id) => {
        const response = await fetch(`${front}/batch/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: token, batch: [{ event: 'preflighted', properties: { distinct_id: id } }] }),
        });
        return response.status;
      },
      front,
      tenant.project.api_token,
      afterReset,
    );
    expect(preflighted).toBe(200);

    // Leaving the page: what is still queued ($pageleave, 'after reset') goes out by sendBeacon.
    await Promise.all([page.waitForNavigation(), page.click('#next')]);
    await page.close();

    const expected = ['$pageview', '$autocapture', '$identify', '$create_alias', '$groupidentify', '$feature_flag_called', 'survey sent', 'after reset', '$pageleave', 'preflighted'];
    const events = await waitFor(
      async () => {
        const stored = await storedEvents();
        return expected.every((name) => stored.some((e) => e.event === name)) && stored;
      },
      { what: `events ${expected.join(', ')} in the events API`, timeoutMs: 60_000 },
    );
    const one = (name: string) => events.find((e) => e.event === name)!;

    for (const event of events.filter((e) => e.event !== 'preflighted')) {
      expect(event.properties).toMatchObject({ $lib: 'web', $current_url: site.url, $session_id: expect.any(String), $device_id: expect.any(String) });
    }
    expect(one('$pageview')).toMatchObject({ distinct_id: anonymous.distinctId, properties: { $session_id: anonymous.sessionId, $device_id: anonymous.deviceId } });
    // The link click that leaves the page is autocaptured too; this is the button's.
    const click = events.find((e) => e.event === '$autocapture' && e.elements_chain.startsWith('button'))!;
    expect(click).toMatchObject({ distinct_id: anonymous.distinctId, properties: { $event_type: 'click' } });
    expect(click.elements_chain).toMatch(/^button\.btn\.primary:.*attr__id="buy"/);
    expect(click.elements_chain).toContain('text="Buy now"');
    expect(one('$identify')).toMatchObject({ distinct_id: user, properties: { $anon_distinct_id: anonymous.distinctId, $set: { email: `${user}@example.test`, plan: 'pro' } } });
    expect(one('$create_alias')).toMatchObject({ distinct_id: user, properties: { alias } });
    expect(one('$groupidentify')).toMatchObject({ distinct_id: user, properties: { $group_type: 'company', $group_key: company, $group_set: { name: 'Acme' } } });
    expect(one('survey sent')).toMatchObject({ distinct_id: user, properties: { $survey_id: 'survey-1', $survey_response: 'Love it', $groups: { company } } });
    const called = events.filter((e) => e.event === '$feature_flag_called').map((e) => e.properties);
    expect(called).toContainEqual(expect.objectContaining({ $feature_flag: 'checkout', $feature_flag_response: browserFlags.variant }));
    expect(one('after reset').distinct_id).toBe(afterReset);
    expect(afterReset).not.toBe(user);
    expect(afterReset).not.toBe(anonymous.distinctId);

    // PostHog's merge: identify joins the anonymous id to the user, alias adds the alias; reset starts anew.
    const person = await waitFor(
      async () => {
        const { results } = (await api('GET', `/persons/?distinct_id=${encodeURIComponent(user)}`)) as { results: any[] };
        const found = results[0];
        return found && [anonymous.distinctId, user, alias].every((id) => found.distinct_ids.includes(id)) && found.properties.plan === 'pro' && found;
      },
      { what: 'the person to hold the anonymous id, the user and the alias', timeoutMs: 60_000 },
    );
    expect(person.properties).toMatchObject({ email: `${user}@example.test`, plan: 'pro' });
    expect(person.distinct_ids).not.toContain(afterReset);

    // The browser's flags are the flags API's for the same person.
    const flagsApi = (await (
      await fetch(`${front}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: tenant.project.api_token, distinct_id: user }) })
    ).json()) as { flags: Record<string, { enabled: boolean; variant: string | null; metadata: { payload?: string } }> };
    expect(browserFlags).toEqual({
      enabled: true,
      variant: flagsApi.flags.checkout!.variant,
      payload: JSON.parse(flagsApi.flags.checkout!.metadata.payload!),
    });
    expect(browserFlags.payload).toEqual(JSON.parse(checkoutPayloads[browserFlags.variant as keyof typeof checkoutPayloads]));
    expect(flagsApi.flags['pro-only']!.enabled).toBe(true);

    // Transports: remote config first, then gzip bodies for events and flags, and beacons on unload.
    expect(requests.some((r) => r.url.startsWith(`${front}/array/${tenant.project.api_token}/config`))).toBe(true);
    const eventPosts = requests.filter((r) => /\/(e|i\/v0\/e)\/?(\?|$)/.test(r.url) && r.body);
    expect(eventPosts.length).toBeGreaterThan(0);
    for (const post of eventPosts) expect([...post.body!.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    await waitFor(async () => beacons.some((b) => b.sent && b.url.startsWith(`${front}/i/v0/e/`)), { what: 'events sent by beacon on unload' });

    expect(failures).toEqual([]);
  }, 180_000);
});
