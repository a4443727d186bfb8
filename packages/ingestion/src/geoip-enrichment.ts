import type { RawEvent } from './parse-event.js';

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Adds the `$geoip_*` properties of the address that captured an event, as PostHog's GeoIP step
 * does: on the event itself, on its person as `$set`, and as `$initial_geoip_*` with `$set_once`.
 * What the client sent itself wins over what the address says. `$geoip_disable: true` turns it
 * off for the event. `location` is the lookup of the event's `$ip` property, else capture's address.
 */
export function withGeoip(event: RawEvent, location: Record<string, string>): RawEvent {
  if (event.properties.$geoip_disable === true || Object.keys(location).length === 0) return event;
  const initial = Object.fromEntries(Object.entries(location).map(([key, value]) => [key.replace(/^\$geoip_/, '$initial_geoip_'), value]));
  const { $set, $set_once } = event.properties;
  return {
    ...event,
    properties: {
      ...location,
      ...event.properties,
      $set: { ...location, ...(isObject($set) ? $set : {}) },
      $set_once: { ...initial, ...(isObject($set_once) ? $set_once : {}) },
    },
  };
}

/** The address to locate an event by: its own `$ip` property when it has one, else the capturing client's. */
export function addressOf(event: RawEvent, captureIp: string | null): string | null {
  return typeof event.properties.$ip === 'string' && event.properties.$ip !== '' ? event.properties.$ip : captureIp;
}
