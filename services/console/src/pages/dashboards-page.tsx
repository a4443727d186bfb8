import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { useConsole } from '../console-context.js';
import { link, navigate } from '../router.js';
import { useLoad } from '../use-load.js';

interface DashboardSummary {
  id: number;
  name: string;
  description: string;
  created_at: string;
}

export function DashboardsPage() {
  const { api } = useConsole();
  const dashboards = useLoad(() => api.project<{ results: DashboardSummary[] }>('GET', '/dashboards/'), [api]);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function createTemplate() {
    setCreating(true);
    setError(null);
    try {
      const created = await api.project<{ id: number }>('POST', '/dashboards/', { use_template: 'DEFAULT_APP' });
      navigate(`/dashboards/${created.id}`);
    } catch (e) {
      setError(e);
      setCreating(false);
    }
  }

  const list = dashboards.data?.results ?? [];
  return (
    <section>
      <div class="page-head">
        <h1>Dashboards</h1>
        <button type="button" onClick={createTemplate} disabled={creating}>
          {creating ? 'Creating…' : 'Create the Product analytics dashboard'}
        </button>
      </div>
      <ErrorMessage error={dashboards.error ?? error} />
      {dashboards.loading && !dashboards.data && <p aria-busy="true">Loading…</p>}
      {dashboards.data && list.length === 0 && (
        <p class="empty">No dashboards yet. The button above makes PostHog's Product analytics dashboard: active users, retention, growth accounting, referrers and paths.</p>
      )}
      <ul class="cards" aria-label="Dashboards">
        {list.map((d) => (
          <li>
            <a href={`/dashboards/${d.id}`} onClick={link(`/dashboards/${d.id}`)}>
              {d.name}
            </a>
            {d.description && <p class="muted">{d.description}</p>}
          </li>
        ))}
      </ul>
    </section>
  );
}
