import { useConsole } from './console-context.js';
import { useLoad } from './use-load.js';

/** The project's recent event names, most frequent first, for pickers to suggest. */
export function useEventNames(): string[] {
  const { api } = useConsole();
  const names = useLoad(
    () =>
      api.project<{ results: [string][] }>('POST', '/query/', {
        query: { kind: 'HogQLQuery', query: 'SELECT event FROM events WHERE timestamp > now() - INTERVAL 30 DAY GROUP BY event ORDER BY count() DESC LIMIT 200' },
      }),
    [api],
  );
  return (names.data?.results ?? []).map(([name]) => name);
}
