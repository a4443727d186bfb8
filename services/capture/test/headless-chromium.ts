import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's chromium, which `make test` installs (infra/chromium.sh); no browser is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface HeadlessChromium {
  browser: Browser;
  close: () => Promise<void>;
}

/** A fresh headless Chromium with its own profile, quiet about everything but the page. */
export async function launchChromium(): Promise<HeadlessChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'tributary-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface Site {
  /** The site's root, with its trailing slash. */
  url: string;
  close: () => Promise<void>;
}

/**
 * A site on an origin of its own, as a user's site is to the front door: each path's content
 * type and body (made per request), and `other` for any other request (a 404 when absent).
 */
export async function startSite(pages: Record<string, { type: string; body: () => string | Buffer }>, other?: (req: IncomingMessage, res: ServerResponse) => void): Promise<Site> {
  const server = createServer((req, res) => {
    const page = pages[req.url ?? ''];
    if (page) res.writeHead(200, { 'content-type': page.type }).end(page.body());
    else if (other) other(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
