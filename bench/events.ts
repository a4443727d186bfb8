import { readCredentials, type Credentials } from '@tributary/cli';
import { STATE_DIR } from './lib.js';

export async function readCredentialsOrExit(): Promise<Credentials> {
  const credentials = await readCredentials(`${STATE_DIR}/credentials.env`);
  if (credentials) return credentials;
  console.error(`No ${STATE_DIR}/credentials.env: run \`make up\` first.`);
  process.exit(1);
}

const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge'];
const PATHS = ['/', '/pricing', '/docs/start', '/blog/launch', '/signup'];

/** An event shaped like what posthog-js sends: page and device properties, about 1 KB. */
export function realisticEvent(i: number, distinctIds = 10_000) {
  const path = PATHS[i % PATHS.length]!;
  return {
    event: i % 5 === 0 ? '$pageview' : 'button clicked',
    distinct_id: `user-${i % distinctIds}`,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    properties: {
      $current_url: `https://example.com${path}?ref=${i % 7}`,
      $pathname: path,
      $host: 'example.com',
      $browser: BROWSERS[i % BROWSERS.length],
      $browser_version: 120 + (i % 5),
      $os: i % 2 ? 'Mac OS X' : 'Windows',
      $device_type: 'Desktop',
      $screen_height: 1080,
      $screen_width: 1920,
      $lib: 'web',
      $lib_version: '1.200.0',
      $referrer: 'https://www.google.com/',
      $referring_domain: 'www.google.com',
      $session_id: `session-${Math.floor(i / 20)}`,
      utm_source: i % 3 ? 'newsletter' : undefined,
      button: `cta-${i % 11}`,
      plan: i % 4 ? 'free' : 'pro',
    },
  };
}
