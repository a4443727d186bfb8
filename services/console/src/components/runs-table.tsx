import { ScrollArea } from './scroll-area.js';
import { windowText, type Run } from '../batch-export-view.js';

/** An export's runs, newest window first: each one's status, records and error as the worker recorded it. */
export function RunsTable({ runs, label }: { runs: Run[]; label: string }) {
  if (runs.length === 0) return <p class="muted">No runs yet.</p>;
  return (
    <ScrollArea label={label}>
      <table class="results runs">
        <caption class="visually-hidden">{label}</caption>
        <thead>
          <tr>
            <th scope="col">Window (UTC)</th>
            <th scope="col">Status</th>
            <th scope="col">Records</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr data-run={run.id} data-status={run.status}>
              <td>
                {windowText(run)}
                {run.backfill && <span class="muted"> (backfill)</span>}
              </td>
              <td class="status">{run.status}</td>
              <td>{run.records_completed}</td>
              <td class="run-error">{run.latest_error ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollArea>
  );
}
