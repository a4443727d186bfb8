import { useState } from 'preact/hooks';
import { BackfillPanel } from '../components/backfill-panel.js';
import { BatchExportForm } from '../components/batch-export-form.js';
import { ErrorMessage } from '../components/error-message.js';
import { RunsTable } from '../components/runs-table.js';
import { ScrollArea } from '../components/scroll-area.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';
import { destinationSummary, type BatchExport, type Run } from '../batch-export-view.js';

export function BatchExportsPage() {
  const { api } = useConsole();
  const exports = useLoad(() => api.project<{ results: BatchExport[] }>('GET', '/batch_exports/'), [api]);
  const [openId, setOpenId] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const list = exports.data?.results ?? [];
  const open = list.find((e) => e.id === openId);

  async function setPaused(batchExport: BatchExport, paused: boolean) {
    setError(null);
    try {
      await api.project('POST', `/batch_exports/${batchExport.id}/${paused ? 'pause' : 'unpause'}/`);
      exports.reload();
    } catch (e) {
      setError(e);
    }
  }

  return (
    <section>
      <h1>Batch exports</h1>
      <ErrorMessage error={exports.error ?? error} />
      {exports.data && list.length === 0 && <p class="empty">No batch exports yet. Create one below to send this project's events or persons to S3, Postgres or an HTTP endpoint.</p>}
      {list.length > 0 && (
        <ScrollArea label="Batch exports">
          <table class="results exports">
            <caption class="visually-hidden">Batch exports</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Destination</th>
                <th scope="col">Interval</th>
                <th scope="col">State</th>
                <th scope="col">Last run</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((e) => (
                <tr data-export={e.id}>
                  <td>{e.name}</td>
                  <td>
                    {e.destination.type} <code>{destinationSummary(e.destination)}</code>
                  </td>
                  <td>
                    {e.interval}, {e.model}
                  </td>
                  <td class="export-state status">{e.paused ? 'Paused' : 'Active'}</td>
                  <td>
                    <LastRun run={e.latest_runs[0]} />
                  </td>
                  <td>
                    <div class="row-actions">
                      <button type="button" class="secondary" onClick={() => void setPaused(e, !e.paused)}>
                        {e.paused ? 'Resume' : 'Pause'}
                        <span class="visually-hidden"> {e.name}</span>
                      </button>
                      <button type="button" class="secondary" aria-pressed={openId === e.id} onClick={() => setOpenId(openId === e.id ? null : e.id)}>
                        Runs and backfills<span class="visually-hidden"> of {e.name}</span>
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
      {open && <ExportDetail batchExport={open} onChange={exports.reload} key={open.id} />}
      <BatchExportForm
        onCreated={(created) => {
          exports.reload();
          setOpenId(created.id);
        }}
      />
    </section>
  );
}

function LastRun({ run }: { run: Run | undefined }) {
  if (!run) return <span class="muted">No runs yet</span>;
  return (
    <span>
      {run.status}, {run.records_completed} records
      {run.latest_error && <span class="run-error"> {run.latest_error}</span>}
    </span>
  );
}

/** One export's runs (each with its error) and backfills. */
function ExportDetail({ batchExport, onChange }: { batchExport: BatchExport; onChange: () => void }) {
  const { api } = useConsole();
  const runs = useLoad(() => api.project<{ results: Run[] }>('GET', `/batch_exports/${batchExport.id}/runs/?limit=50`), [api, batchExport]);
  return (
    <section class="detail export-detail" aria-labelledby="export-detail">
      <h2 id="export-detail">{batchExport.name}</h2>
      <BackfillPanel batchExport={batchExport} onChange={onChange} />
      <h3>Runs</h3>
      <ErrorMessage error={runs.error} />
      {runs.data && <RunsTable runs={runs.data.results} label={`Runs of ${batchExport.name}`} />}
    </section>
  );
}
