import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage } from './error-message.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';
import { backfillRange, isActiveBackfill, progressText, windowText, type Backfill, type BatchExport } from '../batch-export-view.js';

/** How often a running backfill's progress is asked for again. */
const POLL_MS = 2000;

/** Start a backfill of past days for one export, and watch each backfill's progress until it ends; a running one can be cancelled. */
export function BackfillPanel({ batchExport, onChange }: { batchExport: BatchExport; onChange: () => void }) {
  const { api } = useConsole();
  const base = `/batch_exports/${batchExport.id}/backfills/`;
  const backfills = useLoad(() => api.project<{ results: Backfill[] }>('GET', base), [api, base]);
  const [from, setFrom] = useState('');
  const [through, setThrough] = useState('');
  const [error, setError] = useState<unknown>(null);
  const list = backfills.data?.results ?? [];
  const active = list.some(isActiveBackfill);

  useEffect(() => {
    if (!active) return;
    const timer = setTimeout(() => {
      backfills.reload();
      onChange();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [active, backfills.data]);

  async function act(run: () => Promise<unknown>) {
    setError(null);
    try {
      await run();
      backfills.reload();
      onChange();
    } catch (e) {
      setError(e);
    }
  }

  function start(e: Event) {
    e.preventDefault();
    const range = backfillRange(from, through, new Date());
    if (!range.body) return setError(new Error(range.error));
    void act(() => api.project('POST', base, range.body));
  }

  return (
    <section aria-labelledby="backfills">
      <h3 id="backfills">Backfills</h3>
      <form class="builder backfill-form" onSubmit={start} noValidate>
        <div class="field">
          <label for="backfill-from">First day (UTC)</label>
          <input id="backfill-from" type="date" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="backfill-through">Last day (UTC)</label>
          <input id="backfill-through" type="date" value={through} onInput={(e) => setThrough((e.target as HTMLInputElement).value)} />
        </div>
        <div class="actions">
          <button type="submit">Start backfill</button>
        </div>
      </form>
      <ErrorMessage error={backfills.error ?? error} />
      {backfills.data && list.length === 0 && <p class="muted">No backfills yet: choose past days to export events by when they happened.</p>}
      {list.length > 0 && (
        <ul class="cards" aria-label="Backfills">
          {list.map((b) => (
            <li data-backfill={b.id} data-status={b.status}>
              <strong>{windowText({ data_interval_start: b.start_at, data_interval_end: b.end_at })}</strong> <span class="badge">{b.status}</span>
              <p>
                <progress max={b.progress?.total_runs || 1} value={b.progress?.finished_runs ?? 0} aria-label={`Backfill from ${b.start_at.slice(0, 10)} progress`} />{' '}
                <span class="progress-text">{progressText(b)}</span>
              </p>
              {isActiveBackfill(b) && (
                <button type="button" class="secondary" onClick={() => void act(() => api.project('POST', `${base}${b.id}/cancel/`))}>
                  Cancel backfill
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
