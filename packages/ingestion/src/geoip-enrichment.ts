import { assignOwn } from '@tributary/payload';
import type { RawEvent } from './parse-event.js';
import { processesPersonProfile } from './personless.js';

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Adds the `$geoip_*` properties of the address that captured an event, as PostHog's GeoIP step
 * does: on the event itself, on its person as `$set`, and as `$initial_geoip_*` with `$set_once`
 * (a personless event has no person, and would have them stripped: see `stripPersonUpdates`).
 * What the client sent itself wins over what the address says. `$geoip_disable: true` turns it
 * off for the event. `location` is the lookup of the event's `$ip` property, else capture's address.
 */
export function withGeoip(event: RawEvent, location: Record<string, string>): RawEvent {
  if (event.properties.$geoip_disable === true || Object.keys(location).length === 0) return event;
  const properties: Record<string, unknown> = assignOwn(assignOwn({}, location), event.properties);
  if (processesPersonProfile(event.properties)) {
    const { $set, $set_once } = event.properties;
    properties.$set = assignOwn(assignOwn({}, location), isObject($set) ? $set : {});
    properties.$set_once = assignOwn(assignOwn({}, initialOf(location)), isObject($set_once) ? $set_once : {});
  }
  return { ...event, properties };
}

// GeoIp answers an address with one shared object (see memoisedByAddress), so events from one
// address share their location object: its `$initial_geoip_*` names are worked out once for all.
const initials = new WeakMap<Record<string, string>, Record<string, string>>();

/** The location as `$initial_geoip_*` properties. */
function initialOf(location: Record<string, string>): Record<string, string> {
  let initial = initials.get(location);
  if (initial === undefined) {
    initial = Object.fromEntries(Object.entries(location).map(([key, value]) => [key.replace(/^\$geoip_/, '$initial_geoip_'), value]));
    initials.set(location, initial);
  }
  return initial;
}

/** The address to locate an event by: its own `$ip` property when it has one, else the capturing client's. */
export function addressOf(event: RawEvent, captureIp: string | null): string | null {
  return typeof event.properties.$ip === 'string' && event.properties.$ip !== '' ? event.properties.$ip : captureIp;
}
