import { BOUNCE_SECONDS, classifyChannel } from '@tributary/hogql';
import { passes, propertyValue, rowsOf, type PropertyFilter, type Row, type World } from './reference.js';

/**
 * Web analytics computed plainly from the raw rows, to hold `WebOverviewQuery` and
 * `WebStatsTableQuery` to: sessions are the events of one `$session_id` (of those passing the
 * filters, within a day around the periods), in the period of their first event, counted when
 * they have a pageview. Their entry is the first event with a URL, and the channel its UTM
 * parameters and referrer by `classifyChannel` (itself held to hand-written cases).
 */
export interface WebRequest {
  kind: 'WebOverviewQuery' | 'WebStatsTableQuery';
  dateRange: { date_from: string; date_to: string };
  properties?: PropertyFilter[];
  compareFilter?: { compare: boolean };
  breakdownBy?: string;
  limit?: number;
}

interface Session {
  id: string;
  personId: string;
  start: number;
  end: number;
  pageviews: Row[];
  entry: Row | null;
  exit: Row | null;
  bounce: boolean;
  rows: Row[];
}

const DAY = 86_400_000;
const dayStart = (date: string) => Date.parse(`${date}T00:00:00Z`);

/** The range asked (UTC days, the end day whole) and the one as long just before it. */
export function periodsOf(request: WebRequest): { current: [number, number]; previous: [number, number] | null } {
  const from = dayStart(request.dateRange.date_from);
  const to = dayStart(request.dateRange.date_to) + DAY;
  return { current: [from, to], previous: request.compareFilter?.compare ? [from - (to - from), from] : null };
}

function sessionsOf(world: World, request: WebRequest, readFrom: number, readTo: number): Session[] {
  const byId = new Map<string, Row[]>();
  const onEvents = request.properties?.filter((f) => f.type !== 'session');
  for (const row of rowsOf(world)) {
    const id = propertyValue(row.properties, '$session_id');
    if (id === null || row.time < readFrom || row.time >= readTo || !passes(onEvents, row)) continue;
    byId.set(id, [...(byId.get(id) ?? []), row]);
  }
  return [...byId].map(([id, unsorted]) => {
    const rows = [...unsorted].sort((a, b) => a.time - b.time);
    const withUrl = rows.filter((r) => propertyValue(r.properties, '$current_url') !== null);
    const pageviews = rows.filter((r) => r.event === '$pageview');
    const autocaptures = rows.filter((r) => r.event === '$autocapture').length;
    const start = rows[0]!.time;
    const end = rows.at(-1)!.time;
    const bounce = !(pageviews.length + autocaptures > 1 || (end - start) / 1000 >= BOUNCE_SECONDS);
    return { id, personId: rows[0]!.personId, start, end, pageviews, entry: withUrl[0] ?? null, exit: withUrl.at(-1) ?? null, bounce, rows };
  });
}

const entryValue = (s: Session, key: string) => (s.entry ? propertyValue(s.entry.properties, key) : null);
const channelOf = (s: Session) =>
  classifyChannel({
    utmSource: entryValue(s, 'utm_source'),
    utmMedium: entryValue(s, 'utm_medium'),
    utmCampaign: entryValue(s, 'utm_campaign'),
    referringDomain: entryValue(s, '$referring_domain'),
    gclid: entryValue(s, 'gclid'),
    gadSource: entryValue(s, 'gad_source'),
    fbclid: entryValue(s, 'fbclid'),
  });

/** A session's columns as a row's properties, for session property filters. */
function sessionRow(s: Session): Row {
  const columns = Object.fromEntries(Object.entries(SESSION_COLUMNS).map(([column, read]) => [column, read(s)]).filter(([, v]) => v !== null));
  return { ...s.rows[0]!, properties: columns };
}

/** Each period's counted sessions. */
function periodSessions(world: World, request: WebRequest): { current: Session[]; previous: Session[] | null } {
  const { current, previous } = periodsOf(request);
  const onSessions = request.properties?.filter((f) => f.type === 'session');
  const all = sessionsOf(world, request, (previous ?? current)[0] - DAY, current[1] + DAY).filter((s) => s.pageviews.length > 0 && passes(onSessions, sessionRow(s)));
  const within = ([from, to]: [number, number]) => all.filter((s) => s.start >= from && s.start < to);
  return { current: within(current), previous: previous ? within(previous) : null };
}

export function referenceWebOverview(world: World, request: WebRequest): object[] {
  const { current, previous } = periodSessions(world, request);
  const totals = (sessions: Session[]) => ({
    visitors: new Set(sessions.map((s) => s.personId)).size,
    views: sessions.reduce((n, s) => n + s.pageviews.length, 0),
    sessions: sessions.length,
    duration: sessions.length ? sessions.reduce((n, s) => n + (s.end - s.start) / 1000, 0) / sessions.length : null,
    bounce: sessions.length ? (sessions.filter((s) => s.bounce).length / sessions.length) * 100 : null,
  });
  const now = totals(current);
  const before = previous ? totals(previous) : null;
  const change = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : Math.round((100 * (a - b)) / b));
  const item = (key: string, kind: string, field: keyof typeof now, extra = {}) => ({ key, kind, value: now[field], previous: before?.[field] ?? null, changeFromPreviousPct: change(now[field], before?.[field] ?? null), ...extra });
  return [
    item('visitors', 'unit', 'visitors'),
    item('views', 'unit', 'views'),
    item('sessions', 'unit', 'sessions'),
    item('session duration', 'duration_s', 'duration'),
    item('bounce rate', 'percentage', 'bounce', { isIncreaseBad: true }),
  ];
}

/** The session columns the cases filter on. */
const SESSION_COLUMNS: Record<string, (s: Session) => string | null> = {
  $channel_type: channelOf,
  $entry_pathname: (s) => entryValue(s, '$pathname'),
  $entry_referring_domain: (s) => entryValue(s, '$referring_domain'),
};

const SESSION_KEYS: Record<string, (s: Session) => string | null> = {
  InitialPage: (s) => entryValue(s, '$pathname'),
  ExitPage: (s) => (s.exit ? propertyValue(s.exit.properties, '$pathname') : null),
  InitialReferringDomain: (s) => entryValue(s, '$referring_domain'),
  InitialChannelType: channelOf,
  InitialUTMSource: (s) => entryValue(s, 'utm_source'),
  InitialUTMMedium: (s) => entryValue(s, 'utm_medium'),
  InitialUTMCampaign: (s) => entryValue(s, 'utm_campaign'),
};
const PAGEVIEW_KEYS: Record<string, string> = { DeviceType: '$device_type', Browser: '$browser', OS: '$os', Country: '$geoip_country_code', City: '$geoip_city_name' };

interface Tally {
  persons: Set<string>;
  views: number;
  sessions: Set<string>;
  bounces: Set<string>;
}

/** Per breakdown value: its visitors, views and bounce rate over the period's sessions. */
function tallies(sessions: Session[], breakdown: string): Map<string, Tally> {
  const out = new Map<string, Tally>();
  const tally = (value: string) => out.get(value) ?? out.set(value, { persons: new Set(), views: 0, sessions: new Set(), bounces: new Set() }).get(value)!;
  for (const s of sessions) {
    if (breakdown === 'Page') {
      for (const pv of s.pageviews) {
        const page = propertyValue(pv.properties, '$pathname');
        if (page === null) continue;
        const t = tally(page);
        t.persons.add(s.personId);
        t.views++;
        if (entryValue(s, '$pathname') === page) {
          t.sessions.add(s.id);
          if (s.bounce) t.bounces.add(s.id);
        }
      }
      continue;
    }
    const key = PAGEVIEW_KEYS[breakdown];
    const value = key ? (s.pageviews.map((pv) => propertyValue(pv.properties, key)).find((v) => v !== null) ?? null) : SESSION_KEYS[breakdown]!(s);
    if (value === null) continue;
    const t = tally(value);
    t.persons.add(s.personId);
    t.views += s.pageviews.length;
    t.sessions.add(s.id);
    if (s.bounce) t.bounces.add(s.id);
  }
  return out;
}

export function referenceWebStats(world: World, request: WebRequest): { results: unknown[][]; hasMore: boolean } {
  const { current, previous } = periodSessions(world, request);
  const now = tallies(current, request.breakdownBy!);
  const before = previous ? tallies(previous, request.breakdownBy!) : null;
  const rate = (t: Tally | undefined) => (t && t.sessions.size ? t.bounces.size / t.sessions.size : null);
  const values = [...new Set([...now.keys(), ...(before?.keys() ?? [])])];
  const rows = values.map((v) => {
    const [n, b] = [now.get(v), before?.get(v)];
    const prev = (x: number) => (before ? x : null);
    return [v, [n?.persons.size ?? 0, prev(b?.persons.size ?? 0)], [n?.views ?? 0, prev(b?.views ?? 0)], [rate(n), before ? rate(b) : null]] as [string, number[], number[], unknown[]];
  });
  rows.sort((x, y) => y[1][0]! - x[1][0]! || y[2][0]! - x[2][0]! || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const limit = request.limit ?? 10;
  return { results: rows.slice(0, limit), hasMore: rows.length > limit };
}
