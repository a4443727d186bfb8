import { useEffect, useRef, useState } from 'preact/hooks';
import { useConsole } from './console-context.js';

/**
 * Runs a query on POST .../query/ with a `client_query_id`, so Cancel can both drop the request
 * and tell the API (DELETE .../query/:id/) to kill it in ClickHouse. While it runs, `elapsed`
 * counts seconds for the progress line.
 */
export function useCancellableQuery<T>() {
  const { api } = useConsole();
  const [state, setState] = useState<{ data?: T; error?: unknown; running: boolean }>({ running: false });
  const [elapsed, setElapsed] = useState(0);
  const current = useRef<{ id: string; abort: AbortController } | null>(null);

  useEffect(() => {
    if (!state.running) return;
    const started = Date.now();
    const timer = setInterval(() => setElapsed(Math.floor((Date.now() - started) / 1000)), 250);
    return () => clearInterval(timer);
  }, [state.running]);

  async function run(query: object): Promise<void> {
    const id = crypto.randomUUID();
    const abort = new AbortController();
    current.current = { id, abort };
    setElapsed(0);
    setState((s) => ({ data: s.data, running: true }));
    try {
      const data = await api.project<T>('POST', '/query/', { query, client_query_id: id }, abort.signal);
      if (current.current?.id === id) setState({ data, running: false });
    } catch (error) {
      if (current.current?.id === id) setState({ error: abort.signal.aborted ? new Error('Cancelled.') : error, running: false });
    }
  }

  async function cancel(): Promise<void> {
    const running = current.current;
    if (!running) return;
    running.abort.abort();
    await api.project('DELETE', `/query/${running.id}/`).catch(() => undefined);
  }

  return { ...state, elapsed, run, cancel };
}
