import { useConsole } from './console-context.js';
import { useLoad } from './use-load.js';

interface Definitions {
  results: { name: string }[];
}

const PICKER_SIZE = 200;

/** The project's event names ingest has seen, most recently seen first, for pickers to suggest. */
export function useEventNames(): string[] {
  const { api } = useConsole();
  const names = useLoad(() => api.project<Definitions>('GET', `/event_definitions/?limit=${PICKER_SIZE}`), [api]);
  return (names.data?.results ?? []).map(({ name }) => name);
}

/**
 * The project's event property keys, those seen on `events` first (PostHog's order for
 * `event_names`), for property pickers to suggest.
 */
export function usePropertyNames(events: readonly string[]): string[] {
  const { api } = useConsole();
  const seenOn = events.filter(Boolean);
  const key = JSON.stringify(seenOn);
  const names = useLoad(
    () => api.project<Definitions>('GET', `/property_definitions/?type=event&limit=${PICKER_SIZE}${seenOn.length > 0 ? `&event_names=${encodeURIComponent(key)}` : ''}`),
    [api, key],
  );
  return (names.data?.results ?? []).map(({ name }) => name);
}
