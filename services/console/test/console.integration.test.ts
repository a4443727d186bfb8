import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { ControlPlaneStore, type Project } from '@tributary/control-plane';
import { createPool, createTestTenant, frontDoorApi, testConfig, uniqueName, waitFor, type TestTenant } from '@tributary/test-support';
import { launchChromium, type HeadlessChromium } from '../../capture/test/headless-chromium.js';

/**
 * The web console as a user meets it: built (infra/console.sh) and served by the running front
 * door, driven in headless Chromium against data sent through /batch/. Each page is asserted on
 * what it shows (a chart's numbers, a table's rows), photographed, and checked with axe-core.
 */
const config = testConfig();
const front = config.publicUrl.replace(/\/$/, '');
const pool = createPool(config, { max: 2 });
const api = frontDoorApi(front, () => tenant);
// `/api/projects/:id/...`, where the project's own settings are.
const projectApi = frontDoorApi(front, () => tenant, 'projects');
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const screenshots = path.join(root, '.tributary', 'test-artifacts', 'console');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const DAY = 86_400_000;
const USERS = 6;
const DAYS = 21;
const browserOf = (user: number) => (user % 2 ? 'Chrome' : 'Firefox');
// User `u` is active on day `d` (days ago) unless (7u + d) is a multiple of 3: a few weeks of
// uneven activity, so retention and lifecycle have something to show.
const active = Array.from({ length: USERS }, (_, u) => Array.from({ length: DAYS }, (_, d) => d).filter((d) => (7 * u + d) % 3 !== 0)).map((days, u) => ({ u, days }));
const pageviews = active.flatMap(({ u, days }) => days.map((d) => ({ u, d })));
const SIGNED_UP = [0, 1, 2, 3];
const PAID = [0, 1];
const TOTAL_EVENTS = pageviews.length + SIGNED_UP.length + PAID.length;

let tenant: TestTenant;
// When the captured events were sent: their timestamps are counted back from it.
let sentAt: number;
/** The UTC date `daysAgo` days before the events were sent: every such day has some of them. */
const day = (daysAgo: number) => new Date(sentAt - daysAgo * DAY).toISOString().slice(0, 10);
// A bucket on the stack's S3Proxy for the Batch exports page's export, which must exist before a run writes to it.
const bucket = uniqueName('console').toLowerCase().replace(/[^a-z0-9-]/g, '-');
// A second project in the tenant's organization, with nothing in it.
let emptyProject: Project;
// Databases this file creates on the machine's Postgres for Postgres exports to write to; dropped at the end.
const targetDatabases: string[] = [];
let chromium: HeadlessChromium;
let page: Page;
const pageErrors: string[] = [];

function capturedBatch(now: number) {
  const at = (daysAgo: number, user: number) => new Date(now - daysAgo * DAY - 90_000 - user * 1000).toISOString();
  return [
    ...pageviews.map(({ u, d }) => ({
      event: '$pageview',
      distinct_id: `user-${u}`,
      timestamp: at(d, u),
      properties: { $browser: browserOf(u), $referring_domain: u < 3 ? 'google.com' : 'news.ycombinator.com', $pathname: `/p/${d % 3}`, $current_url: `https://shop.test/p/${d % 3}`, $session_id: `s-${u}-${d}`, $set: { email: `user-${u}@shop.test` } },
    })),
    ...SIGNED_UP.map((u) => ({ event: 'signed up', distinct_id: `user-${u}`, timestamp: at(10, u), properties: {} })),
    ...PAID.map((u) => ({ event: 'paid', distinct_id: `user-${u}`, timestamp: at(9, u), properties: {} })),
  ];
}

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  const store = new ControlPlaneStore(pool, config.apiKeyPepper);
  // The status page reads installation-wide figures, which only an instance operator may.
  await store.setInstanceOperator(tenant.user.id, true);
  emptyProject = await store.createProject(tenant.organizationId, uniqueName('empty'));
  const response = await fetch(`${front}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: tenant.project.api_token, batch: capturedBatch((sentAt = Date.now())) }),
  });
  expect(response.status).toBe(200);
  await api('POST', '/feature_flags/', { key: 'console-flag', name: 'Console flag', active: true, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } });
  await waitFor(
    async () => {
      const { results } = await api('POST', '/query/', { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
      const persons = await api('GET', '/persons/?search=user-1');
      // Ingest writes the definitions beside the events' insert, so they may land a moment after them.
      const definitions = await api('GET', '/event_definitions/');
      return results[0][0] === TOTAL_EVENTS && persons.results.length > 0 && definitions.count === 3;
    },
    { what: 'the captured events, their persons and their event definitions to be stored', timeoutMs: 60_000 },
  );
  await waitFor(
    async () => {
      const flags = await fetch(`${front}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: tenant.project.api_token, distinct_id: 'probe' }) });
      return 'console-flag' in ((await flags.json()) as { flags: Record<string, unknown> }).flags;
    },
    { what: 'decide to see the new flag' },
  );
  const s3 = new S3Client({
    endpoint: config.s3Endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  s3.destroy();
  mkdirSync(screenshots, { recursive: true });
  chromium = await launchChromium();
  page = await chromium.browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('pageerror', (error) => pageErrors.push(String(error)));
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  for (const database of targetDatabases) await pool.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await pool.end();
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** Sets a field as typing would, so the page's input handlers see it. */
async function fill(selector: string, value: string): Promise<void> {
  await page.waitForSelector(selector);
  await page.$eval(
    selector,
    (element, text) => {
      (element as unknown as { value: string }).value = text;
      element.dispatchEvent(new Event('input', { bubbles: true }));
    },
    value,
  );
}

async function choose(selector: string, value: string): Promise<void> {
  await page.select(selector, value);
}

async function goTo(label: string, heading: string): Promise<void> {
  await page.click(`nav a[href="${label}"]`);
  await page.waitForFunction(`document.querySelector('main h1')?.textContent === ${JSON.stringify(heading)}`);
}

/** How many lines the text of the element `selector` finds is laid out on: the tops of the line boxes it spans. */
const linesOfText = (selector: string) =>
  page.evaluate(`(() => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector(${JSON.stringify(selector)}));
    return new Set([...range.getClientRects()].map((rect) => rect.top)).size;
  })()`) as Promise<number>;

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true });
}

/** axe-core's WCAG 2 A and AA rules on the page as it is: no serious or critical violation. */
async function expectAccessible(): Promise<void> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.addScriptTag({ content: axeSource });
  const violations = (await page.evaluate(`axe
    .run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) })))`)) as { id: string; impact: string; targets: string[] }[];
  expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
}

const seriesOf = (selector: string) =>
  page.$eval(selector, (figure) => ({
    labels: JSON.parse(figure.getAttribute('data-labels')!) as string[],
    series: JSON.parse(figure.getAttribute('data-series')!) as { label: string; data: number[] }[],
  }));
const attribute = (selector: string, name: string) => page.$eval(selector, (element, n) => element.getAttribute(n), name);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Creates a daily Postgres export through the Batch exports page's form, to a database on the
 * machine's Postgres (which `make up` allows, other than Tributary's own), as Tributary's user;
 * the page opens it. Returns it as the API lists it.
 */
async function createPostgresExport(name: string, database: string): Promise<{ id: string; name: string }> {
  const server = new URL(config.databaseUrl);
  await choose('#export-type', 'Postgres');
  await fill('#export-name', name);
  await choose('#export-interval', 'day');
  await fill('#export-host', server.hostname);
  await fill('#export-port', server.port || '5432');
  await fill('#export-database', database);
  await fill('#export-user', decodeURIComponent(server.username));
  await fill('#export-password', decodeURIComponent(server.password));
  await page.click('form.export-form button[type=submit]');
  await page.waitForFunction(`document.querySelector('#export-detail')?.textContent === ${JSON.stringify(name)}`);
  const created = ((await api('GET', '/batch_exports/')).results as { id: string; name: string }[]).find((e) => e.name === name);
  expect(created).toBeDefined();
  return created!;
}

/** Starts a backfill of the open export from the first day through the last, and waits for the page to list it. */
async function startBackfill(from: string, through: string): Promise<void> {
  await page.waitForSelector('#backfill-from');
  await fill('#backfill-from', from);
  await fill('#backfill-through', through);
  await page.click('form.backfill-form button[type=submit]');
  await page.waitForSelector('ul[aria-label=Backfills] li .progress-text');
}

describe('the web console, in Chromium against the running stack', () => {
  it('signs in with a personal API key kept for the tab only, and lists the key\'s projects', async () => {
    await page.goto(`${front}/`);
    await page.waitForSelector('#api-key');
    await expectAccessible();
    await fill('#api-key', 'phx_not_a_key');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error[role=alert]');
    expect(await page.$eval('.error', (e) => e.textContent)).toMatch(/invalid/i);
    await screenshot('sign-in');

    await fill('#api-key', tenant.personalApiKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav[aria-label=Pages]');
    await page.waitForFunction(`document.querySelector('.project-switcher select option:checked')?.textContent === ${JSON.stringify(tenant.project.name)}`);
    expect(await page.evaluate('sessionStorage.getItem("tributary-key")')).toBe(tenant.personalApiKey);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('creates the Product analytics dashboard from its template and draws each tile from the captured events', async () => {
    await goTo('/dashboards', 'Dashboards');
    await page.waitForSelector('.empty');
    await page.click('.page-head button');
    await page.waitForFunction(`document.querySelector('main h1')?.textContent === 'Product analytics'`);
    await page.waitForSelector('.tile[data-tile="Daily active users (DAUs)"] figure[data-series]');

    // Each (user, day) pair is one user active on one day, so the daily uniques add up to them.
    const dau = await seriesOf('.tile[data-tile="Daily active users (DAUs)"] figure');
    expect(dau.series).toHaveLength(1);
    expect(sum(dau.series[0]!.data)).toBe(pageviews.length);
    expect(dau.labels).toHaveLength(dau.series[0]!.data.length);

    const lifecycle = await seriesOf('.tile[data-tile="Growth accounting"] figure');
    expect(lifecycle.series.map((s) => s.label.replace('$pageview - ', ''))).toEqual(['new', 'returning', 'resurrecting', 'dormant']);
    // Users seen in an earlier week and again in the next are returning.
    expect(sum(lifecycle.series[1]!.data)).toBeGreaterThan(0);

    const cohorts = JSON.parse((await attribute('.tile[data-tile="Retention"] table.retention', 'data-retention'))!) as number[][];
    expect(sum(cohorts.map((counts) => counts[0] ?? 0))).toBe(USERS);

    const referrers = await seriesOf('.tile[data-tile="Referring domains (last 14 days)"] figure');
    expect(referrers.labels.sort()).toEqual(['google.com', 'news.ycombinator.com']);
    expect(referrers.series[0]!.data.every((n) => n > 0)).toBe(true);
    expect(await page.$eval('.tile[data-tile="Pageviews by path (last 14 days)"] table', (t) => t.textContent)).toContain('/p/0');

    // Refresh recomputes every tile (refresh=force_blocking), and the page shows the new answer.
    await Promise.all([page.waitForResponse((r) => r.url().includes('refresh=force_blocking') && r.ok()), page.click('.page-head button')]);
    await page.waitForFunction(`document.querySelector('.page-head button').textContent === 'Refresh'`);
    expect(sum((await seriesOf('.tile[data-tile="Daily active users (DAUs)"] figure')).series[0]!.data)).toBe(pageviews.length);
    await screenshot('dashboard');
    await expectAccessible();

    await goTo('/dashboards', 'Dashboards');
    await page.waitForSelector('ul[aria-label=Dashboards] a');
    expect(await page.$$eval('ul[aria-label=Dashboards] a', (links) => links.map((a) => a.textContent))).toEqual(['Product analytics']);
  });

  it('runs HogQL and shows the answer as a table, and an error as the API states it', async () => {
    await goTo('/sql', 'SQL');
    await fill('#hogql', 'SELECT count() FROM events');
    await page.click('form button[type=submit]');
    await page.waitForSelector('.query-result table td');
    expect(await page.$$eval('.query-result table td', (cells) => cells.map((c) => c.textContent))).toEqual([String(TOTAL_EVENTS)]);
    expect(await page.$('xpath/.//button[contains(., "Download CSV")]')).not.toBeNull();
    await screenshot('sql');
    await expectAccessible();

    // Four copies of the events crossed, nested because ClickHouse 18.16 joins two tables per
    // SELECT: 90^4 rows, about a second of work, still running when Cancel is clicked.
    await fill('#hogql', 'SELECT count() FROM events a CROSS JOIN (SELECT 1 AS x FROM events b CROSS JOIN (SELECT 1 AS y FROM events c CROSS JOIN events d))');
    await page.click('form button[type=submit]');
    await page.waitForSelector('xpath/.//button[contains(., "Cancel")]');
    const [cancelled] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/query/')),
      page.click('xpath/.//button[contains(., "Cancel")]'),
    ]);
    expect(cancelled.status()).toBe(204);
    await page.waitForSelector('.error[role=alert]');
    expect(await page.$eval('.error', (e) => e.textContent)).toBe('Cancelled.');

    await fill('#hogql', 'SELECT nope FROM events');
    await page.click('form button[type=submit]');
    await page.waitForFunction(`document.querySelector('.error[role=alert]')?.textContent === 'Unable to resolve field: nope (at offset 7)'`);
  });

  it('builds a trend with a breakdown, charts it, shows its HogQL and saves it', async () => {
    await goTo('/insights', 'Insights');
    await fill('#trend-event', '$pageview');
    await choose('#trend-math', 'total');
    await fill('#trend-breakdown', '$browser');
    await choose('#trend-interval', 'day');
    await choose('#date-range', '-30d');
    await page.click('form.builder button[type=submit]');
    await page.waitForSelector('.insight-result figure[data-series]');
    const trend = await seriesOf('.insight-result figure');
    const expected = (browser: string) => pageviews.filter(({ u }) => browserOf(u) === browser).length;
    expect(Object.fromEntries(trend.series.map((s) => [s.label, sum(s.data)]))).toEqual({ Chrome: expected('Chrome'), Firefox: expected('Firefox') });
    expect(await page.$eval('pre[data-hogql]', (p) => p.textContent)).toMatch(/^SELECT /);

    await fill('#insight-name', 'Pageviews by browser');
    await page.click('form.save button[type=submit]');
    await page.waitForSelector('form.save [role=status]');
    const { results } = await api('GET', '/insights/');
    expect(results.map((i: { name: string; query: { source: { kind: string } } }) => [i.name, i.query.source.kind])).toContainEqual(['Pageviews by browser', 'TrendsQuery']);
    await screenshot('insights-trend');
    await expectAccessible();
  });

  it('builds a funnel with its steps and window as bars', async () => {
    await page.click('button[role=tab]:nth-child(2)');
    await fill('#funnel-step-0', 'signed up');
    await fill('#funnel-step-1', 'paid');
    await fill('#funnel-window', '14');
    await choose('#date-range', '-30d');
    await page.click('form.builder button[type=submit]');
    await page.waitForSelector('.insight-result figure[data-chart-type=bar]');
    const funnel = await seriesOf('.insight-result figure');
    expect(funnel.labels).toEqual(['1. signed up', '2. paid']);
    expect(funnel.series[0]!.data).toEqual([SIGNED_UP.length, PAID.length]);
    await screenshot('insights-funnel');
  });

  it("opens the persons behind a funnel step from its cell: those who paid", async () => {
    await page.click('.insight-result details.chart-data summary');
    await page.click('.insight-result details.chart-data tbody tr:first-child td:nth-of-type(2) button');
    await page.waitForSelector('.actors table[data-actors]');
    const ids = JSON.parse((await attribute('.actors table[data-actors]', 'data-actors'))!) as string[];
    expect(ids).toHaveLength(PAID.length);
    // Each person by their display name (the email ingest set), then their distinct ids.
    expect(await page.$$eval('.actors tbody td:nth-child(2)', (cells) => cells.map((c) => c.textContent).sort())).toEqual(PAID.map((u) => `user-${u}`).sort());
    await expectAccessible();
  });

  it('shows retention as a triangle table', async () => {
    await page.click('button[role=tab]:nth-child(3)');
    await fill('#retention-start', '$pageview');
    await fill('#retention-return', '$pageview');
    await choose('#retention-period', 'Week');
    await page.click('form.builder button[type=submit]');
    await page.waitForSelector('.insight-result table.retention');
    const cohorts = JSON.parse((await attribute('.insight-result table.retention', 'data-retention'))!) as number[][];
    expect(sum(cohorts.map((counts) => counts[0] ?? 0))).toBe(USERS);
    await screenshot('insights-retention');
    await expectAccessible();
  });

  it('shows web analytics: overview tiles from the sessions, and a table by the breakdown chosen', async () => {
    await goTo('/web', 'Web analytics');
    await choose('#web-range', '-30d');
    // Each pageview is a session of its own, a bounce.
    const tile = (label: string) => page.waitForFunction(`[...document.querySelectorAll('ul[aria-label=Overview] li')].find((li) => li.querySelector('h2').textContent === ${JSON.stringify(label)})?.querySelector('.figure').textContent`).then((h) => h.jsonValue());
    await page.waitForFunction(`document.querySelector('ul[aria-label=Overview] li .figure')?.textContent === ${JSON.stringify(String(USERS))}`);
    expect([await tile('Visitors'), await tile('Page views'), await tile('Sessions'), await tile('Bounce rate')]).toEqual([String(USERS), String(pageviews.length), String(pageviews.length), '100.0%']);
    await choose('#web-breakdown', 'InitialReferringDomain');
    await page.waitForFunction(`document.querySelector('table.results caption')?.textContent === 'Visitors by referring domain'`);
    // The caption follows the picker at once; the rows follow when the new answer arrives.
    await page.waitForFunction(`[...document.querySelectorAll('table.results tbody td:first-child')].some((td) => td.textContent.endsWith('.com'))`);
    const rows = await page.$$eval('table.results tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const viewsFrom = (domain: string) => String(pageviews.filter(({ u }) => (u < 3 ? 'google.com' : 'news.ycombinator.com') === domain).length);
    // Compared with the 30 days before, which had none.
    expect(rows.map((r) => [r[0], r[1], r[2]]).sort()).toEqual([['google.com', '3 (was 0)', `${viewsFrom('google.com')} (was 0)`], ['news.ycombinator.com', '3 (was 0)', `${viewsFrom('news.ycombinator.com')} (was 0)`]]);
    await screenshot('web-analytics');
    await expectAccessible();
  });

  it('suggests event names and property keys from the event and property definitions ingest keeps', async () => {
    const requested: string[] = [];
    const bodies: string[] = [];
    const listen = (request: HTTPRequest) => {
      requested.push(decodeURIComponent(request.url()));
      bodies.push(request.postData() ?? '');
    };
    page.on('request', listen);
    try {
      await goTo('/events', 'Events');
      const options = (list: string) => page.$$eval(`datalist#${list} option`, (all) => all.map((o) => (o as unknown as { value: string }).value));
      await page.waitForFunction(`document.querySelectorAll('datalist#event-names option').length === 3`);
      expect((await options('event-names')).sort()).toEqual(['$pageview', 'paid', 'signed up']);
      expect(requested.some((url) => url.includes('/event_definitions/'))).toBe(true);
      // Not a HogQL query over the events, as the pickers ran before the definitions.
      expect(bodies.filter((body) => body.includes('GROUP BY event'))).toEqual([]);

      // Keys seen on the chosen event come first, as PostHog orders them for `event_names`.
      await fill('#events-event', '$pageview');
      await page.waitForFunction(`document.querySelector('datalist#property-names option')?.value === '$browser'`);
      expect(await options('property-names')).toEqual(expect.arrayContaining(['$browser', '$current_url', '$pathname', '$referring_domain']));
      expect(requested.some((url) => url.includes('/property_definitions/') && url.includes('event_names=["$pageview"]'))).toBe(true);
      await fill('#events-event', '');
    } finally {
      page.off('request', listen);
    }
  });

  it('lists the newest events and filters them by event', async () => {
    await goTo('/events', 'Events');
    await page.waitForSelector('table[data-events]');
    expect(Number(await attribute('table[data-events]', 'data-events'))).toBe(TOTAL_EVENTS);
    await fill('#events-event', 'paid');
    await page.click('form.builder button[type=submit]');
    await page.waitForSelector('table[data-events="2"]');
    expect(await page.$$eval('table[data-events] tbody td:nth-child(2)', (cells) => cells.map((c) => c.textContent))).toEqual(['paid', 'paid']);
    await fill('#events-event', '$pageview');
    await fill('#events-property', '$browser');
    await fill('#events-value', 'Chrome');
    await page.click('form.builder button[type=submit]');
    const chrome = pageviews.filter(({ u }) => browserOf(u) === 'Chrome').length;
    await page.waitForSelector(`table[data-events="${chrome}"]`);
    await fill('#events-event', 'paid');
    await fill('#events-property', '');
    await page.click('form.builder button[type=submit]');
    await page.waitForSelector('table[data-events="2"]');
    await page.click('table[data-events] tbody button');
    await page.waitForSelector('table[data-events] pre');
    expect(await page.$eval('table[data-events] pre', (p) => p.textContent)).toContain('"event": "paid"');
    await screenshot('events');
    await expectAccessible();
  });

  it('finds a person by distinct id and shows their properties and events', async () => {
    await goTo('/persons', 'Persons');
    await fill('#persons-search', 'user-1');
    await page.click('form.builder button[type=submit]');
    await page.waitForFunction(`document.querySelectorAll('ul[aria-label=Persons] li').length === 1`);
    await page.click('ul[aria-label=Persons] button');
    await page.waitForSelector('.detail table.results td');
    expect(await page.$eval('.detail', (d) => d.textContent)).toContain('user-1@shop.test');
    await page.waitForFunction(`document.querySelectorAll('.detail table.results').length === 2`);
    expect(await page.$$eval('.detail table.results', (tables) => tables[1]!.querySelectorAll('tbody tr').length)).toBe(
      pageviews.filter(({ u }) => u === 1).length + 2,
    );
    await screenshot('persons');
    await expectAccessible();
  });

  it('lists feature flags, shows what /flags answers for a distinct id, edits rollout and condition groups with a person property filter, and disables a flag', async () => {
    await goTo('/feature-flags', 'Feature flags');
    await page.waitForSelector('table.results code');
    expect(await page.$eval('table.results code', (c) => c.textContent)).toBe('console-flag');
    await fill('#decide-distinct-id', 'user-1');
    await page.click('xpath/.//button[contains(., "Ask /flags")]');
    await page.waitForSelector('ul[aria-label="Flags for this user"] li');
    expect(await page.$eval('ul[aria-label="Flags for this user"] li', (li) => li.textContent)).toMatch(/^console-flag: enabled/);
    await screenshot('feature-flags');
    await expectAccessible();

    const save = () => Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH' && r.ok()), page.click('form.rollout button[type=submit]')]);
    const groupsOf = async () => ((await api('GET', '/feature_flags/')).results[0] as { filters: { groups: unknown[] } }).filters.groups;
    const emailIsUser1 = { key: 'email', value: 'user-1@shop.test', operator: 'exact', type: 'person' };
    const flagFor = async (distinctId: string) => {
      const response = await fetch(`${front}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: tenant.project.api_token, distinct_id: distinctId }) });
      return ((await response.json()) as { flags: Record<string, { enabled: boolean }> }).flags['console-flag']?.enabled;
    };

    await fill('input[aria-label="console-flag condition 1 rollout percentage"]', '25');
    await save();
    expect(await groupsOf()).toEqual([expect.objectContaining({ rollout_percentage: 25 })]);

    // A second group for one person by a person property, then the first group removed: only they get the flag.
    await page.click('xpath/.//button[contains(., "Add condition group")]');
    await fill('input[aria-label="console-flag condition 2 property key"]', 'email');
    await fill('input[aria-label="console-flag condition 2 property value"]', 'user-1@shop.test');
    await page.click('xpath/.//fieldset[@data-condition="2"]//button[contains(., "Add filter")]');
    await page.waitForFunction(`document.querySelector('ul[aria-label="console-flag condition 2 filters"]').textContent.includes('email exact user-1@shop.test')`);
    await save();
    expect(await groupsOf()).toEqual([expect.objectContaining({ rollout_percentage: 25, properties: [] }), { properties: [emailIsUser1], rollout_percentage: 100 }]);
    await page.click('xpath/.//button[contains(., "Remove condition 1")]');
    await save();
    expect(await groupsOf()).toEqual([{ properties: [emailIsUser1], rollout_percentage: 100 }]);
    await waitFor(async () => (await flagFor('user-1')) === true && (await flagFor('user-2')) === false, { what: '/flags to give the flag to user-1 only' });
    await screenshot('feature-flag-conditions');
    await expectAccessible();

    await page.click('table.results input[type=checkbox]');
    await page.waitForFunction(`[...document.querySelectorAll('table.results label')].some((l) => l.textContent.trim().endsWith('Off'))`);
    const { results } = await api('GET', '/feature_flags/');
    expect(results.map((f: { key: string; active: boolean }) => [f.key, f.active])).toEqual([['console-flag', false]]);
  });

  it("shows what /status reports and the last hour's rates from the services' metrics as charts", async () => {
    await goTo('/status', 'Status');
    await page.waitForSelector('table.services tr[data-service=capture]');
    expect(await page.$$eval('table.services tbody th', (cells) => cells.map((c) => c.textContent))).toEqual(['capture', 'decide', 'api', 'ingest', 'worker']);
    expect(await page.$eval('.status-figures', (e) => e.textContent)).toMatch(/in the last hour/);
    // The api samples every 15 s since it started, and this test's batch went through capture.
    await page.waitForSelector('.tile[data-rate=capture_events_accepted] figure[data-series]', { timeout: 60_000 });
    const accepted = await seriesOf('.tile[data-rate=capture_events_accepted] figure');
    expect(accepted.series[0]!.data.length).toBeGreaterThan(0);
    expect(accepted.labels).toHaveLength(accepted.series[0]!.data.length);
    expect(await page.$$eval('.tile[data-rate] h2', (titles) => titles.map((t) => t.textContent))).toHaveLength(4);
    await screenshot('status');
    await expectAccessible();
    // The front door serves the console at /status too, so the address itself opens the page.
    await page.goto(`${front}/status`);
    await page.waitForFunction(`document.querySelector('main h1')?.textContent === 'Status'`);
  }, 90_000);

  it('creates an S3 batch export with its fields checked in the form and the API\'s refusal shown as stated, pauses and resumes it, and backfills past days with their progress', async () => {
    await goTo('/batch-exports', 'Batch exports');
    await page.waitForSelector('.empty');
    expect(await page.$eval('.empty', (e) => e.textContent)).toContain('No batch exports yet');
    const submit = () => page.click('form.export-form button[type=submit]');

    // A bad value is named beside its field, before anything is sent.
    await choose('#export-type', 'HTTP');
    await fill('#export-name', 'To ClickHouse');
    await fill('#export-url', 'not a url');
    await fill('#export-token', 'phc_x');
    await submit();
    await page.waitForSelector('#export-url-error');
    expect(await page.$eval('#export-url-error', (e) => e.textContent)).toBe('URL must be an http:// or https:// URL.');
    expect(await attribute('#export-url', 'aria-invalid')).toBe('true');
    await expectAccessible();
    // The installation's own ClickHouse is refused by the API, which names the field.
    await fill('#export-url', 'http://127.0.0.1:8123');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/batch_exports/')), submit()]);
    expect(refused.status()).toBe(400);
    const { detail } = (await refused.json()) as { detail: string };
    expect(detail).toMatch(/^destination\.config\.url is refused: /);
    await page.waitForFunction(`document.querySelector('form.export-form .error[role=alert]')?.textContent === ${JSON.stringify(detail)}`);
    await screenshot('batch-export-refused');

    // To the stack's S3Proxy, which `make up` allows; the secret is never answered back.
    await choose('#export-type', 'S3');
    await fill('#export-name', 'Console S3');
    await choose('#export-interval', 'day');
    await fill('#export-bucket_name', bucket);
    await fill('#export-prefix', 'events/{year}-{month}-{day}');
    await fill('#export-endpoint_url', new URL(config.s3Endpoint).origin);
    await fill('#export-aws_access_key_id', config.s3AccessKeyId);
    await fill('#export-aws_secret_access_key', config.s3SecretAccessKey);
    await submit();
    await page.waitForSelector('table.exports tr[data-export]');
    expect(await page.$eval('table.exports tbody tr', (row) => row.textContent)).toContain(`s3://${bucket}/events/{year}-{month}-{day}`);
    const [created] = (await api('GET', '/batch_exports/')).results as { id: string; name: string; interval: string; destination: { config: Record<string, unknown> } }[];
    expect(created).toMatchObject({ name: 'Console S3', interval: 'day', destination: { config: { bucket_name: bucket, endpoint_url: new URL(config.s3Endpoint).origin } } });
    expect(created!.destination.config).not.toHaveProperty('aws_secret_access_key');

    await page.click('xpath/.//table[contains(@class, "exports")]//button[contains(., "Pause")]');
    await page.waitForFunction(`document.querySelector('table.exports .export-state')?.textContent === 'Paused'`);
    expect((await api('GET', `/batch_exports/${created!.id}/`)).paused).toBe(true);
    await page.click('xpath/.//table[contains(@class, "exports")]//button[contains(., "Resume")]');
    await page.waitForFunction(`document.querySelector('table.exports .export-state')?.textContent === 'Active'`);
    expect((await api('GET', `/batch_exports/${created!.id}/`)).paused).toBe(false);
    // On a phone's width the table narrows by breaking its other cells; the state stays one word on one line.
    await page.setViewport({ width: 390, height: 844 });
    const stateLines = await linesOfText('table.exports .export-state');
    await screenshot('batch-exports-narrow');
    await page.setViewport({ width: 1280, height: 900 });
    expect(stateLines).toBe(1);

    // Two whole past days, by when the events happened: two daily windows, every event in them exported.
    const [from, through] = [day(4), day(3)];
    const inRange = capturedBatch(sentAt).filter((e) => e.timestamp >= `${from}T00:00:00` && e.timestamp < new Date(Date.parse(`${through}T00:00:00Z`) + DAY).toISOString()).length;
    expect(inRange).toBeGreaterThan(0);
    await startBackfill(from, through);
    expect(await page.$eval('ul[aria-label=Backfills] li .progress-text', (e) => e.textContent)).toMatch(/^\d of 2 windows \(\d+%\), \d+ (of \d+ )?records$/);
    await page.waitForFunction(`document.querySelector('ul[aria-label=Backfills] li')?.dataset.status === 'Completed'`, { timeout: 60_000 });
    await page.waitForFunction(`/^2 of 2 windows \\(100%\\), ${inRange} (of ${inRange} )?records$/.test(document.querySelector('ul[aria-label=Backfills] li .progress-text')?.textContent)`);
    expect(await page.$eval('ul[aria-label=Backfills] li', (li) => li.textContent)).toContain(`${from} 00:00 – ${day(2)} 00:00`);
    await screenshot('batch-export-backfill');
    await expectAccessible();

    // Listed with its runs: each window's status and records, as the worker recorded them.
    await goTo('/feature-flags', 'Feature flags');
    await goTo('/batch-exports', 'Batch exports');
    await page.waitForSelector('table.exports tr[data-export]');
    expect(await page.$$eval('table.exports tbody td:first-child', (cells) => cells.map((c) => c.textContent))).toEqual(['Console S3']);
    await page.click('xpath/.//table[contains(@class, "exports")]//button[contains(., "Runs and backfills")]');
    await page.waitForSelector('table.runs tr[data-run]');
    const runs = await page.$$eval('table.runs tbody tr', (rows) => rows.filter((r) => r.textContent!.includes('(backfill)')).map((r) => [r.getAttribute('data-status'), Number(r.children[2]!.textContent)]));
    expect(runs.map(([status]) => status)).toEqual(['Completed', 'Completed']);
    expect(runs.reduce((total, [, records]) => total + (records as number), 0)).toBe(inRange);
    await screenshot('batch-exports');
    await expectAccessible();
  }, 120_000);

  it("shows a run that failed with the destination's error, in its runs and as its export's last run", async () => {
    // A database that does not exist: Postgres refuses the connection, an error no retry can fix, so the run fails at once.
    const missing = uniqueName('console_missing');
    await goTo('/batch-exports', 'Batch exports');
    const failing = await createPostgresExport('Console Postgres, no database', missing);
    await startBackfill(day(5), day(5));
    await page.waitForFunction(`document.querySelector('ul[aria-label=Backfills] li')?.dataset.status === 'Failed'`, { timeout: 60_000 });
    const [run, ...others] = (await api('GET', `/batch_exports/${failing.id}/runs/`)).results as { id: string; status: string; latest_error: string }[];
    expect(others).toEqual([]);
    expect(run).toMatchObject({ status: 'Failed', latest_error: expect.stringContaining(`database "${missing}" does not exist`) });
    await page.waitForSelector(`table.runs tr[data-run="${run!.id}"][data-status=Failed]`);
    expect(await page.$eval(`table.runs tr[data-run="${run!.id}"] .run-error`, (cell) => cell.textContent)).toBe(run!.latest_error);
    expect(await page.$eval(`table.exports tr[data-export="${failing.id}"]`, (row) => row.textContent)).toContain(`Failed, 0 records ${run!.latest_error}`);
    await screenshot('batch-export-failed-run');
    await expectAccessible();
    // Paused, so no scheduled window of it runs once the test is over.
    await api('POST', `/batch_exports/${failing.id}/pause/`);
  }, 90_000);

  it('cancels a backfill while its run is still writing, and shows it cancelled as the API states it', async () => {
    const database = uniqueName('console_target');
    await goTo('/batch-exports', 'Batch exports');
    await pool.query(`CREATE DATABASE ${database}`);
    targetDatabases.push(database);
    const targetUrl = new URL(config.databaseUrl);
    targetUrl.pathname = `/${database}`;
    const target = createPool({ ...config, databaseUrl: targetUrl.href }, { max: 1 });
    const holder = await target.connect();
    // The destination's table, locked by a transaction left open: the backfill's first write
    // waits on it, so the backfill is still running when Cancel is clicked, however fast the worker.
    await holder.query('CREATE TABLE events (uuid VARCHAR(200) PRIMARY KEY, event VARCHAR(200))');
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    try {
      const exported = await createPostgresExport('Console Postgres', database);
      await startBackfill(day(7), day(6));
      await waitFor(
        async () => (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`, [database])).rows[0]!.n > 0,
        { what: "the backfill's first write to wait on the locked table", timeoutMs: 60_000 },
      );
      await page.waitForFunction(`document.querySelector('ul[aria-label=Backfills] li')?.dataset.status === 'Running'`);
      expect(await page.$eval('ul[aria-label=Backfills] li .progress-text', (e) => e.textContent)).toMatch(/^0 of 2 windows \(0%\), 0 (of \d+ )?records$/);

      await page.click('xpath/.//ul[@aria-label="Backfills"]//button[contains(., "Cancel backfill")]');
      await page.waitForFunction(`document.querySelector('ul[aria-label=Backfills] li')?.dataset.status === 'Cancelled'`);
      expect(await page.$eval('ul[aria-label=Backfills] li .badge', (badge) => badge.textContent)).toBe('Cancelled');
      expect(await page.$('xpath/.//ul[@aria-label="Backfills"]//button[contains(., "Cancel backfill")]')).toBeNull();
      const statuses = async () => ({
        backfills: ((await api('GET', `/batch_exports/${exported.id}/backfills/`)).results as { status: string }[]).map((b) => b.status),
        runs: ((await api('GET', `/batch_exports/${exported.id}/runs/`)).results as { status: string }[]).map((r) => r.status),
      });
      // The window being written and the one waiting are both cancelled.
      expect(await statuses()).toEqual({ backfills: ['Cancelled'], runs: ['Cancelled', 'Cancelled'] });
      await page.waitForFunction(`[...document.querySelectorAll('table.runs tr[data-run]')].map((r) => r.dataset.status).join() === 'Cancelled,Cancelled'`);
      await screenshot('batch-export-cancelled');
      await expectAccessible();

      // The write that waited goes through once the lock is gone, and its run stops there, still cancelled.
      const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await holder.query('ROLLBACK');
      await waitFor(
        async () => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> $2', [database, rows[0]!.pid])).rows[0]!.n === 0,
        { what: 'the worker to close its connection to the destination', timeoutMs: 30_000 },
      );
      expect(await statuses()).toEqual({ backfills: ['Cancelled'], runs: ['Cancelled', 'Cancelled'] });
      await api('POST', `/batch_exports/${exported.id}/pause/`);
    } finally {
      // Closed rather than returned: a test that failed before the ROLLBACK leaves its lock with the connection.
      holder.release(true);
      await target.end();
    }
  }, 120_000);

  it("edits the project's event retention, with its days checked in the form and the API's refusal shown as stated", async () => {
    await goTo('/settings', 'Project settings');
    await page.waitForSelector('dd[data-setting=retention]');
    const setting = (name: string) => page.$eval(`dd[data-setting=${name}]`, (e) => e.textContent);
    expect([await setting('name'), await setting('timezone'), await setting('retention')]).toEqual([tenant.project.name, tenant.project.timezone, 'Kept forever']);
    expect(await page.$eval('#settings-retention-days', (e) => (e as unknown as { disabled: boolean }).disabled)).toBe(true);
    const submit = () => page.click('form.settings-form button[type=submit]');
    const saved = (retention: string) => page.waitForFunction(`document.querySelector('dd[data-setting=retention]')?.textContent === ${JSON.stringify(retention)} && document.querySelector('form.settings-form [role=status]')?.textContent === 'Settings saved.'`);

    // A bad value is named beside its field, before anything is sent.
    await page.click('#settings-keep-days');
    await fill('#settings-retention-days', '0');
    await submit();
    await page.waitForSelector('#settings-retention-days-error');
    expect(await page.$eval('#settings-retention-days-error', (e) => e.textContent)).toBe('Days must be a whole number from 1 to 36500.');
    expect(await attribute('#settings-retention-days', 'aria-invalid')).toBe('true');
    await expectAccessible();
    // A timezone no one has is refused by the API, which names the field.
    await fill('#settings-retention-days', '30');
    await fill('#settings-timezone', 'Mars/Olympus_Mons');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes(`/api/projects/${tenant.project.id}/`)), submit()]);
    expect(refused.status()).toBe(400);
    const { detail } = (await refused.json()) as { detail: string };
    expect(detail).toMatch(/^timezone must be an IANA timezone name/);
    await page.waitForFunction(`document.querySelector('form.settings-form .error[role=alert]')?.textContent === ${JSON.stringify(detail)}`);
    expect((await projectApi('GET', '/')).event_retention_days).toBeNull();

    await fill('#settings-timezone', tenant.project.timezone);
    await submit();
    await saved('30 days');
    expect(await page.$('#settings-retention-days-error')).toBeNull();
    expect(await projectApi('GET', '/')).toMatchObject({ name: tenant.project.name, timezone: tenant.project.timezone, event_retention_days: 30 });
    await screenshot('project-settings');
    await expectAccessible();

    await page.click('#settings-keep-forever');
    await submit();
    await saved('Kept forever');
    expect((await projectApi('GET', '/')).event_retention_days).toBeNull();
  });

  it('switches to another project, whose empty pages say what to do next', async () => {
    await page.select('.project-switcher select', String(emptyProject.id));
    await goTo('/events', 'Events');
    await page.waitForSelector('.empty pre code');
    expect(await page.$eval('.empty pre code', (c) => c.textContent)).toBe(`posthog.init('${emptyProject.api_token}', { api_host: '${front}' })`);
    await screenshot('events-empty');
    await expectAccessible();
    await goTo('/dashboards', 'Dashboards');
    await page.waitForSelector('.empty');
    expect(await page.$eval('.empty', (e) => e.textContent)).toContain('No dashboards yet');
  });
});
