import type { ImportEvent } from '../import/import-record.js';
import { seededRandom, type SeededRandom } from './seeded-random.js';

export interface DemoShape {
  weeks: number;
  users: number;
  seed: number;
  /** Every event is before this instant (epoch ms). */
  now: number;
}

/** Set on every demo event as an SDK sets its name, so the demo events can be counted apart. */
export const DEMO_LIB = 'tributary-demo-data';
export const DEMO_FLAG = 'new-pricing-page';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const HOST = 'hedgebox.example';

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Ken', 'Margaret', 'Linus', 'Radia', 'Dennis', 'Frances', 'John', 'Sophie', 'Tim', 'Hedy', 'Donald'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Thompson', 'Hamilton', 'Torvalds', 'Perlman', 'Ritchie', 'Allen', 'Backus', 'Wilson', 'Lee', 'Lamarr', 'Knuth'];
interface Device { $browser: string; $os: string; $device_type: string }
interface Channel { referrer: string; utm: Record<string, string> }
type Weighted<T> = readonly (readonly [T, number])[];

const DEVICES: Weighted<Device> = [
  [{ $browser: 'Chrome', $os: 'Mac OS X', $device_type: 'Desktop' }, 35],
  [{ $browser: 'Safari', $os: 'iOS', $device_type: 'Mobile' }, 20],
  [{ $browser: 'Chrome', $os: 'Windows', $device_type: 'Desktop' }, 20],
  [{ $browser: 'Firefox', $os: 'Linux', $device_type: 'Desktop' }, 10],
  [{ $browser: 'Chrome', $os: 'Android', $device_type: 'Mobile' }, 10],
  [{ $browser: 'Microsoft Edge', $os: 'Windows', $device_type: 'Desktop' }, 5],
];
/** Where a first visit comes from: the referrer and the utm parameters of its landing URL. */
const CHANNELS: Weighted<Channel> = [
  [{ referrer: 'https://www.google.com/', utm: {} }, 40],
  [{ referrer: '$direct', utm: {} }, 20],
  [{ referrer: 'https://news.ycombinator.com/', utm: {} }, 12],
  [{ referrer: 'https://t.co/', utm: { utm_source: 'twitter', utm_medium: 'social', utm_campaign: 'launch-week' } }, 14],
  [{ referrer: 'https://mail.google.com/', utm: { utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'monthly-digest' } }, 9],
  [{ referrer: 'https://www.producthunt.com/', utm: { utm_source: 'producthunt', utm_medium: 'referral' } }, 5],
];
const MARKETING_PATHS: Weighted<string> = [['/features', 4], ['/pricing', 3], ['/blog/shipping-faster', 2], ['/docs', 2], ['/about', 1]];
const APP_PATHS: Weighted<string> = [['/files', 6], ['/files/shared', 3], ['/settings', 1], ['/billing', 1]];
const PLANS: Weighted<{ plan: string; amount: number }> = [[{ plan: 'standard', amount: 10 }, 3], [{ plan: 'professional', amount: 25 }, 1]];

/** How likely a first visit signs up, and a signed-up user buys on one visit: the funnel's drop-off. */
const SIGN_UP_ON_FIRST_VISIT = 0.35;
const SIGN_UP_ON_RETURN = 0.1;
const PURCHASE_PER_VISIT = 0.18;

interface DemoUser {
  anonymousId: string;
  userId: string;
  name: string;
  email: string;
  device: Device;
  channel: Channel;
  variant: 'test' | 'control';
  /** Days ago of the first visit. */
  firstDay: number;
  /** Chance of a visit on a given day in the first week; it halves every week after. */
  loyalty: number;
  signedUp: boolean;
  purchased: boolean;
}

function demoUser(random: SeededRandom, days: number): DemoUser {
  const first = random.pick(FIRST_NAMES);
  const last = random.pick(LAST_NAMES);
  const handle = random.uuid().slice(0, 6);
  return {
    anonymousId: random.uuid(),
    userId: `user_${handle}`,
    name: `${first} ${last}`,
    email: `${first}.${last}.${handle}@example.com`.toLowerCase(),
    device: random.weighted(DEVICES),
    channel: random.weighted(CHANNELS),
    variant: random.chance(0.5) ? 'test' : 'control',
    firstDay: random.int(0, days - 1),
    loyalty: 0.15 + random.next() * 0.5,
    signedUp: false,
    purchased: false,
  };
}

const referringDomain = (referrer: string) => (referrer === '$direct' ? '$direct' : new URL(referrer).hostname);

/** One visit's events: pageviews along a path, and the funnel steps the user takes on it. */
function visitEvents(random: SeededRandom, user: DemoUser, start: number, firstVisit: boolean): ImportEvent[] {
  const events: ImportEvent[] = [];
  const sessionId = random.uuid();
  const referrer = firstVisit ? user.channel.referrer : random.chance(0.8) ? '$direct' : 'https://www.google.com/';
  const utm = firstVisit ? user.channel.utm : {};
  let at = start;
  const emit = (event: string, properties: Record<string, unknown>) => {
    events.push({
      event,
      distinct_id: user.signedUp ? user.userId : user.anonymousId,
      timestamp: new Date(at).toISOString(),
      uuid: random.uuid(),
      properties: { $lib: DEMO_LIB, $session_id: sessionId, ...user.device, [`$feature/${DEMO_FLAG}`]: user.variant, ...properties },
    });
    at += random.int(15, 150) * 1000;
  };
  const pageview = (pathname: string, landing = false) => {
    const query = landing && Object.keys(utm).length > 0 ? `?${new URLSearchParams(utm).toString()}` : '';
    emit('$pageview', {
      $current_url: `https://${HOST}${pathname}${query}`,
      $host: HOST,
      $pathname: pathname,
      $referrer: referrer,
      $referring_domain: referringDomain(referrer),
      ...(landing ? utm : {}),
    });
    if (pathname === '/pricing') emit('$feature_flag_called', { $feature_flag: DEMO_FLAG, $feature_flag_response: user.variant });
  };

  pageview(user.signedUp ? '/files' : '/', true);
  const pages = random.int(1, 5);
  for (let i = 0; i < pages; i++) pageview(random.weighted(user.signedUp ? APP_PATHS : MARKETING_PATHS));
  if (!user.signedUp && random.chance(firstVisit ? SIGN_UP_ON_FIRST_VISIT : SIGN_UP_ON_RETURN)) {
    pageview('/signup');
    user.signedUp = true;
    emit('$identify', { $anon_distinct_id: user.anonymousId, $set: { email: user.email, name: user.name, plan: 'free' }, $set_once: { initial_referring_domain: referringDomain(user.channel.referrer) } });
    emit('signed up', { signup_method: random.chance(0.6) ? 'google' : 'email' });
    pageview('/files');
  }
  // Buying needs a visit after the one that signed up, as a trial would.
  else if (user.signedUp && !user.purchased && random.chance(PURCHASE_PER_VISIT)) {
    const { plan, amount } = random.weighted(PLANS);
    pageview('/pricing');
    user.purchased = true;
    emit('purchase', { plan, amount, currency: 'USD', $set: { plan } });
  }
  return events;
}

/**
 * A few weeks of a file-sharing product's events, as posthog-js and posthog-node would send them:
 * anonymous visitors who land from a channel, some sign up ($identify with $set) and later buy,
 * and come back on fewer days as the weeks pass. The same shape gives the same events.
 */
export function generateDemoEvents(shape: DemoShape): ImportEvent[] {
  const random = seededRandom(shape.seed);
  const days = shape.weeks * 7;
  const events: ImportEvent[] = [];
  for (let u = 0; u < shape.users; u++) {
    const user = demoUser(random, days);
    for (let daysAgo = user.firstDay; daysAgo >= 0; daysAgo--) {
      const weeksSince = Math.floor((user.firstDay - daysAgo) / 7);
      const firstVisit = daysAgo === user.firstDay;
      if (!firstVisit && !random.chance(user.loyalty / 2 ** weeksSince)) continue;
      // Visits fall in the day that ends `daysAgo` days before now, with a margin so that a whole visit is past.
      const start = shape.now - daysAgo * DAY - random.int(HOUR, DAY - 30 * MINUTE);
      events.push(...visitEvents(random, user, start, firstVisit));
    }
  }
  return events.sort((a, b) => a.timestamp!.localeCompare(b.timestamp!));
}
