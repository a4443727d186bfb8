import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { InsightResult } from '../components/insight-result.js';
import { useConsole } from '../console-context.js';
import type { InsightSource } from '../insight-view.js';
import { link } from '../router.js';
import { useLoad } from '../use-load.js';

interface Tile {
  id: number;
  insight: { id: number; name: string; query: { source?: InsightSource } & InsightSource; result: unknown; last_refresh?: string | null } | null;
  text?: { body: string } | null;
}

interface Dashboard {
  id: number;
  name: string;
  description: string;
  tiles: Tile[];
}

export function DashboardPage({ id }: { id: number }) {
  const { api } = useConsole();
  // A refresh recomputes every tile instead of reading the cache.
  const [refresh, setRefresh] = useState<'blocking' | 'force_blocking'>('blocking');
  const [generation, setGeneration] = useState(0);
  const dashboard = useLoad(() => api.project<Dashboard>('GET', `/dashboards/${id}/?refresh=${refresh}`), [api, id, refresh, generation]);
  const d = dashboard.data;

  return (
    <section>
      <p>
        <a href="/dashboards" onClick={link('/dashboards')}>
          ← Dashboards
        </a>
      </p>
      <div class="page-head">
        <h1>{d?.name ?? 'Dashboard'}</h1>
        <button
          type="button"
          disabled={dashboard.loading}
          onClick={() => {
            setRefresh('force_blocking');
            setGeneration((g) => g + 1);
          }}
        >
          {dashboard.loading ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {d?.description && <p class="muted">{d.description}</p>}
      <ErrorMessage error={dashboard.error} />
      {dashboard.loading && !d && <p aria-busy="true">Computing tiles…</p>}
      <div class="tiles">
        {d?.tiles.map((tile) => {
          if (!tile.insight) return tile.text ? <article class="tile">{tile.text.body}</article> : null;
          const { insight } = tile;
          const source = insight.query.source ?? insight.query;
          return (
            <article class="tile" data-tile={insight.name} aria-labelledby={`tile-${tile.id}`}>
              <h2 id={`tile-${tile.id}`}>{insight.name}</h2>
              <InsightResult title={insight.name} source={source} results={insight.result} />
            </article>
          );
        })}
      </div>
      {d && d.tiles.length === 0 && <p class="empty">This dashboard has no tiles. Save an insight from the Insights page.</p>}
    </section>
  );
}
