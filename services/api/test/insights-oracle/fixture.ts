import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import type { RawDistinctId, RawEvent, RawPerson, World } from './reference.js';

/**
 * The oracle's project, written in local wall-clock time so that its edges (23:59:59.999 and
 * 00:00:00 of a day, Sunday to Monday, the last second of a month) are edges in whatever zone the
 * project is in. January 2024 starts on a Monday; America/New_York springs forward on 2024-03-10.
 *
 * Who is who:
 * - alice: `alice` and `alice-phone`, and `bob-laptop` since a later version re-pointed it from bob
 *   (a merge); her plan was free in January (on her events), pro since (and on her person now).
 * - bob, carol, dan (no properties at all), erin, frank, gina (active from February only).
 * - zed: a distinct id whose latest mapping is a deletion, so its events keep their stored person.
 * Null breakdown values: bob, dan and zed have no country; `$browser` is absent, empty or JSON null
 * on some pageviews. January's events arrive in a second, later insert, after February's.
 */

type Props = Record<string, unknown>;
/** [local time, distinct id, event, properties, $group_0] */
type Spec = [string, string, string, Props?, string?];

const PERSONS = {
  alice: { created: '2023-12-20 10:00:00', versions: [{ plan: 'free', country: 'US' }, { plan: 'pro', country: 'US' }] },
  bob: { created: '2024-01-01 11:00:00', versions: [{ plan: 'free' }] },
  carol: { created: '2024-01-03 07:00:00', versions: [{ plan: 'pro', country: 'DE' }] },
  dan: { created: '2024-01-05 09:00:00', versions: [{}] },
  erin: { created: '2024-01-02 14:00:00', versions: [{ plan: 'enterprise', country: 'FR' }] },
  frank: { created: '2024-01-15 00:00:00', versions: [{ plan: 'free', country: 'US' }] },
  gina: { created: '2023-11-01 00:00:00', versions: [{ plan: 'pro', country: 'DE' }] },
} as const;
type PersonName = keyof typeof PERSONS;

/** Each distinct id's mappings, by version; `null` is a deletion. */
const DISTINCT_IDS: Record<string, (PersonName | null)[]> = {
  alice: ['alice'],
  'alice-phone': ['alice'],
  bob: ['bob'],
  'bob-laptop': ['bob', 'alice'],
  carol: ['carol'],
  dan: ['dan'],
  erin: ['erin'],
  frank: ['frank'],
  gina: ['gina'],
  zed: ['frank', null],
};

/** The person properties ingest wrote on an event: alice's plan changed on February 1st (local). */
function personPropertiesAt(distinctId: string, local: string): Props {
  if (distinctId === 'zed') return { plan: 'free' };
  const person = (distinctId === 'bob-laptop' || distinctId === 'alice-phone' ? 'alice' : distinctId) as PersonName;
  const versions = PERSONS[person].versions;
  return person === 'alice' && local < '2024-02-01' ? versions[0] : versions.at(-1)!;
}

const pv = (browser: unknown, session?: string): Props => ({ ...(browser !== undefined && { $browser: browser }), ...(session !== undefined && { $session_id: session }) });

/** February and March: the first insert. */
const NEWER: Spec[] = [
  ['2024-02-01 00:00:00', 'alice', '$pageview', pv('Chrome', 's10')],
  ['2024-02-01 00:00:00', 'carol', '$pageview', pv('Firefox')],
  ['2024-02-02 08:00:00', 'alice-phone', '$pageview', pv('Safari', 's11')],
  ['2024-02-04 23:59:59.999', 'gina', '$pageview', pv('Chrome', 's13')],
  ['2024-02-05 00:00:00', 'gina', '$pageview', pv('Chrome', 's13')],
  ['2024-02-05 09:00:00', 'dan', '$pageview', pv(undefined)],
  // Signs up and cancels, and never buys: an exclusion before the funnel's last step.
  ['2024-02-06 10:00:00', 'gina', 'signup', {}],
  ['2024-02-06 10:30:00', 'gina', 'cancel', {}],
  ['2024-02-10 12:00:00', 'bob', '$pageview', pv(null)],
  ['2024-02-14 10:00:00', 'alice', '$pageview', pv('Chrome', 's12')],
  ['2024-02-14 10:05:00', 'alice', 'purchase', { amount: 12.25, $session_id: 's12' }, 'acme'],
  ['2024-02-20 09:00:00', 'erin', '$pageview', pv('Firefox')],
  ['2024-02-29 23:59:59', 'erin', 'purchase', { amount: 30 }, 'globex'],
  ['2024-03-01 00:00:00', 'alice', '$pageview', pv('Chrome')],
  ['2024-03-01 00:00:00', 'erin', 'purchase', { amount: 2 }, 'globex'],
  ['2024-03-10 00:30:00', 'alice', '$pageview', pv('Chrome')],
  ['2024-03-10 03:30:00', 'gina', '$pageview', pv('Safari')],
  ['2024-03-10 23:30:00', 'alice', '$pageview', pv('Chrome')],
  ['2024-03-11 00:00:00', 'gina', '$pageview', pv('Safari')],
  ['2024-03-15 12:00:00', 'frank', '$pageview', pv('Chrome')],
];

/** January: a second insert, older than what is already stored. */
const HISTORICAL: Spec[] = [
  ['2024-01-01 09:00:00', 'alice', '$pageview', pv('Chrome', 's1')],
  ['2024-01-01 09:05:00', 'alice', 'signup', { $session_id: 's1' }],
  ['2024-01-01 09:30:00', 'alice', 'purchase', { amount: 10, $session_id: 's1' }, 'acme'],
  ['2024-01-01 23:59:59.999', 'alice-phone', '$pageview', pv('Safari', 's2')],
  ['2024-01-02 00:00:00', 'alice', '$pageview', pv('Chrome', 's2')],
  ['2024-01-03 10:59:59', 'alice', '$pageview', pv('Chrome', 's3')],
  ['2024-01-03 11:00:00', 'alice', '$pageview', pv('Chrome', 's3')],
  ['2024-01-07 23:59:59', 'alice-phone', '$pageview', pv('Safari')],
  ['2024-01-08 00:00:00', 'alice', '$pageview', pv('Chrome', '')],
  ['2024-01-10 12:00:00', 'bob-laptop', '$pageview', pv('Firefox', 's4')],
  ['2024-01-10 12:30:00', 'bob-laptop', 'purchase', { amount: 25.5, $session_id: 's4' }, 'globex'],
  ['2024-01-31 23:59:59', 'alice', '$pageview', pv('Chrome')],

  ['2024-01-01 12:00:00', 'bob', '$pageview', pv('Firefox', 's5')],
  ['2024-01-02 12:00:00', 'bob', '$pageview', pv('Firefox')],
  ['2024-01-03 12:00:00', 'bob', '$pageview', pv(undefined)],
  ['2024-01-20 12:00:00', 'bob', '$pageview', pv('')],
  ['2024-01-20 12:05:00', 'bob', 'signup', {}],
  ['2024-01-20 12:10:00', 'bob', 'cancel', {}],
  ['2024-01-20 12:20:00', 'bob', 'purchase', { amount: '42' }, 'acme'],

  ['2024-01-03 08:00:00', 'carol', '$pageview', pv('Firefox', 's6')],
  ['2024-01-03 08:10:00', 'carol', 'signup', { $session_id: 's6' }],
  ['2024-01-04 09:00:00', 'carol', 'purchase', { amount: 7 }],
  ['2024-01-05 18:00:00', 'carol', '$pageview', pv('Chrome')],
  ['2024-01-06 18:00:00', 'carol', '$pageview', pv('Chrome')],
  ['2024-01-15 08:00:00', 'carol', '$pageview', pv('Firefox')],

  ['2024-01-05 10:00:00', 'dan', '$pageview', pv('Safari', 's7')],
  ['2024-01-05 10:01:00', 'dan', 'signup', {}],
  ['2024-01-05 10:02:00', 'dan', '$pageview', pv('Safari', 's7')],
  ['2024-01-05 10:03:00', 'dan', 'purchase', { amount: 100, $session_id: '' }],
  ['2024-01-29 10:00:00', 'dan', '$pageview', pv(null)],

  ['2024-01-02 15:00:00', 'erin', 'signup', {}],
  ['2024-01-02 15:30:00', 'erin', '$pageview', pv('Chrome')],
  ['2024-01-02 16:00:00', 'erin', 'purchase', { amount: 'n/a' }, 'acme'],
  ['2024-01-09 09:00:00', 'erin', '$pageview', pv('Chrome')],
  ['2024-01-16 09:00:00', 'erin', '$pageview', pv('Chrome')],
  ['2024-01-23 09:00:00', 'erin', '$pageview', pv('Edge')],

  ['2024-01-15 00:00:00', 'frank', '$pageview', pv('Chrome', 's8')],
  ['2024-01-15 23:59:59', 'frank', '$pageview', pv('Chrome', 's8')],
  ['2024-01-16 10:00:00', 'frank', 'signup', {}],
  ['2024-01-16 11:00:00', 'frank', 'cancel', {}],
  ['2024-01-17 10:00:00', 'frank', 'purchase', { amount: 55 }, 'globex'],

  ['2024-01-12 12:00:00', 'zed', 'purchase', { amount: 5 }],
];

/** What the second project holds under the same distinct ids: none of it may reach the first's answers. */
const OTHER_PROJECT: Spec[] = [
  ['2024-01-01 10:00:00', 'alice', '$pageview', pv('Leak', 'leak')],
  ['2024-01-02 10:00:00', 'mallory', '$pageview', pv('Leak', 'leak')],
  ['2024-01-02 10:05:00', 'mallory', 'signup', {}],
  ['2024-01-02 10:10:00', 'mallory', 'purchase', { amount: 1_000_000 }, 'evil'],
  ['2024-02-14 10:00:00', 'bob', '$pageview', pv('Leak')],
];

export interface StoredEvent {
  distinctId: string;
  event: string;
  /** `YYYY-MM-DD hh:mm:ss` in UTC, as ClickHouse stores it, and the milliseconds apart. */
  timestamp: string;
  ms: number;
  properties: Props;
  personProperties: Props;
  personId: string;
  group0: string;
}

export interface Fixture {
  world: World;
  /** Inserted in this order: the newer batch first, then the historical one. */
  batches: StoredEvent[][];
  persons: { id: string; createdAt: string; properties: Props; version: number }[];
  distinctIds: RawDistinctId[];
}

const utc = (local: string, zone: string) => DateTime.fromSQL(local, { zone }).toUTC();

/** The fixture for a project in `zone`, with persons of its own (fresh ids). */
export function buildFixture(zone: string, { other = false } = {}): Fixture {
  const personIds = Object.fromEntries(Object.keys(PERSONS).map((name) => [name, randomUUID()])) as Record<PersonName, string>;
  // zed's events keep the person ingest stored on them, who has no row.
  const storedIds: Record<string, string> = { zed: randomUUID(), mallory: randomUUID() };
  const toStored = (spec: Spec): StoredEvent => {
    const [local, distinctId, event, properties = {}, group0 = ''] = spec;
    const time = utc(local, zone);
    const personName = DISTINCT_IDS[distinctId]?.[0];
    return {
      distinctId,
      event,
      timestamp: time.toFormat('yyyy-MM-dd HH:mm:ss'),
      ms: time.millisecond,
      properties,
      personProperties: other ? { plan: 'pro', country: 'Leak' } : personPropertiesAt(distinctId, local),
      personId: storedIds[distinctId] ?? personIds[personName!],
      group0,
    };
  };
  const batches = other ? [OTHER_PROJECT.map(toStored)] : [NEWER.map(toStored), HISTORICAL.map(toStored)];
  const persons = (Object.entries(PERSONS) as [PersonName, (typeof PERSONS)[PersonName]][]).flatMap(([name, person]) =>
    person.versions.map((properties, i) => ({ id: personIds[name], createdAt: utc(person.created, zone).toFormat('yyyy-MM-dd HH:mm:ss'), properties: other ? { country: 'Leak' } : properties, version: i + 1 })),
  );
  const distinctIds = Object.entries(DISTINCT_IDS).flatMap(([distinctId, versions]) =>
    versions.map((name, i) => ({ distinctId, personId: name ? personIds[name] : personIds[versions[i - 1]!]!, version: i + 1, isDeleted: name === null })),
  );
  const world: World = {
    timezone: zone,
    events: batches.flat().map(
      (e): RawEvent => ({
        event: e.event,
        distinctId: e.distinctId,
        time: Date.parse(`${e.timestamp.replace(' ', 'T')}Z`) + e.ms,
        properties: e.properties,
        personProperties: e.personProperties,
        storedPersonId: e.personId,
        group0: e.group0,
      }),
    ),
    persons: persons.map((p): RawPerson => ({ id: p.id, createdAt: Date.parse(`${p.createdAt.replace(' ', 'T')}Z`), properties: p.properties, version: p.version })),
    distinctIds,
  };
  return { world, batches, persons, distinctIds };
}
