import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readCredentials } from '@tributary/cli';
import { launchChromium } from '../../capture/test/headless-chromium.js';

/**
 * The README's dashboard picture: `npx tsx services/console/scripts/readme-screenshot.ts <dashboard id>`
 * after `npx tributary demo-data`, signed in with the key `make up` wrote.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dashboardId = Number(process.argv[2]);
if (!Number.isInteger(dashboardId) || dashboardId <= 0) throw new Error('usage: readme-screenshot.ts <dashboard id>');
const credentials = await readCredentials(path.join(root, '.tributary', 'credentials.env'));
if (!credentials) throw new Error('no .tributary/credentials.env: run make up first');

const chromium = await launchChromium();
try {
  const page = await chromium.browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${credentials.TRIBUTARY_URL}/`);
  await page.evaluate(
    `sessionStorage.setItem('tributary-key', ${JSON.stringify(credentials.TRIBUTARY_PERSONAL_API_KEY)});
     sessionStorage.setItem('tributary.projectId', ${JSON.stringify(credentials.TRIBUTARY_PROJECT_ID)})`,
  );
  await page.goto(`${credentials.TRIBUTARY_URL}/dashboards/${dashboardId}`);
  await page.waitForFunction(`document.querySelectorAll('.tile figure[data-series], .tile table').length >= 6`, { timeout: 60_000 });
  // Chart.js animates its first drawing.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await page.screenshot({ path: path.join(root, 'docs', 'images', 'dashboard.png'), fullPage: true });
} finally {
  await chromium.close();
}
