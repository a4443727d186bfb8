import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';

interface Metric {
  kind: 'ExperimentTrendsQuery' | 'ExperimentFunnelsQuery';
  name?: string;
  count_query?: { series: { event: string }[] };
  funnels_query?: { series: { event: string }[] };
}

interface Experiment {
  id: number;
  name: string;
  feature_flag_key: string | null;
  start_date: string | null;
  end_date: string | null;
  archived: boolean;
  metrics: Metric[];
  metrics_secondary: Metric[];
}

interface Results {
  kind: Metric['kind'];
  variants: { key: string; count?: number; absolute_exposure?: number; success_count?: number; failure_count?: number }[];
  probability: Record<string, number>;
  credible_intervals: Record<string, [number, number]>;
  significant: boolean;
  significance_code: string;
}

/** PostHog's wording of each verdict. */
const VERDICTS: Record<string, string> = {
  significant: 'Significant: a winner is clear.',
  not_enough_exposure: 'Not enough exposure: each variant needs at least 100 exposed persons.',
  low_win_probability: 'Not significant: no variant has a 90% chance to win.',
  high_loss: 'Not significant: choosing the leader risks too large an expected loss.',
};

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
const metricLabel = (m: Metric) => m.name ?? (m.count_query ?? m.funnels_query)!.series.map((s) => s.event).join(' → ');
const status = (e: Experiment) => (e.archived ? 'archived' : !e.start_date ? 'draft' : e.end_date && Date.parse(e.end_date) < Date.now() ? 'complete' : 'running');

function MetricResults({ experiment, secondary, metric }: { experiment: Experiment; secondary: boolean; metric: Metric }) {
  const { api } = useConsole();
  // The metric is asked as the query kind it is, of this experiment, as PostHog's console asks it.
  const results = useLoad(() => api.project<Results>('POST', '/query/', { query: { ...metric, experiment_id: experiment.id } }), [api, experiment.id, metric]);
  const funnel = metric.kind === 'ExperimentFunnelsQuery';
  const r = results.data;
  const interval = (key: string) => {
    const [low, high] = r!.credible_intervals[key] ?? [0, 0];
    return funnel ? `${percent(low)} – ${percent(high)}` : `${low.toFixed(3)} – ${high.toFixed(3)}`;
  };
  return (
    <article>
      <h3>
        {secondary ? 'Secondary' : 'Primary'}: {metricLabel(metric)} <span class="muted">({funnel ? 'funnel' : 'count per person'})</span>
      </h3>
      <ErrorMessage error={results.error} />
      {results.loading && !r && <p aria-busy="true">Loading…</p>}
      {r && (
        <>
          <p class={r.significant ? 'ok' : 'muted'}>{VERDICTS[r.significance_code] ?? r.significance_code}</p>
          <table aria-label={`Results of ${metricLabel(metric)}`}>
            <thead>
              <tr>
                <th>Variant</th>
                <th>Exposed</th>
                <th>{funnel ? 'Converted' : 'Events'}</th>
                <th>{funnel ? 'Conversion' : 'Per person'}</th>
                <th>Chance to win</th>
                <th>95% credible interval</th>
              </tr>
            </thead>
            <tbody>
              {r.variants.map((v) => {
                const exposed = funnel ? v.success_count! + v.failure_count! : v.absolute_exposure!;
                const value = funnel ? v.success_count! : v.count!;
                return (
                  <tr>
                    <td>{v.key}</td>
                    <td>{exposed}</td>
                    <td>{value}</td>
                    <td>{exposed === 0 ? '–' : funnel ? percent(value / exposed) : (value / exposed).toFixed(3)}</td>
                    <td>{percent(r.probability[v.key] ?? 0)}</td>
                    <td>{interval(v.key)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      )}
    </article>
  );
}

function ExperimentDetail({ experiment }: { experiment: Experiment }) {
  if (!experiment.start_date) return <p class="empty">Not launched: set a start date to read results.</p>;
  const metrics = [...experiment.metrics.map((m, i) => ({ m, i, secondary: false })), ...experiment.metrics_secondary.map((m, i) => ({ m, i, secondary: true }))];
  if (metrics.length === 0) return <p class="empty">No metrics yet.</p>;
  return (
    <>
      {metrics.map(({ m, i, secondary }) => (
        <MetricResults experiment={experiment} secondary={secondary} metric={m} key={`${secondary}-${i}`} />
      ))}
    </>
  );
}

/** The project's experiments, and the chosen one's results per variant: chance to win, credible intervals, verdict. */
export function ExperimentsPage() {
  const { api } = useConsole();
  const experiments = useLoad(() => api.project<{ results: Experiment[] }>('GET', '/experiments/'), [api]);
  const [chosen, setChosen] = useState<number | null>(null);
  const list = experiments.data?.results ?? [];
  const selected = list.find((e) => e.id === chosen);
  return (
    <section>
      <div class="page-head">
        <h1>Experiments</h1>
      </div>
      <ErrorMessage error={experiments.error} />
      {experiments.loading && !experiments.data && <p aria-busy="true">Loading…</p>}
      {experiments.data && list.length === 0 && <p class="empty">No experiments yet. Create one through the API: POST /api/projects/:id/experiments/.</p>}
      <table aria-label="Experiments">
        <thead>
          <tr>
            <th>Name</th>
            <th>Flag</th>
            <th>Status</th>
            <th>Metrics</th>
          </tr>
        </thead>
        <tbody>
          {list.map((e) => (
            <tr class={e.id === chosen ? 'selected' : ''}>
              <td>
                <button type="button" class="link" onClick={() => setChosen(e.id)}>
                  {e.name}
                </button>
              </td>
              <td>{e.feature_flag_key}</td>
              <td>{status(e)}</td>
              <td>{e.metrics.length + e.metrics_secondary.length}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {selected && (
        <>
          <h2>{selected.name}</h2>
          <ExperimentDetail experiment={selected} />
        </>
      )}
    </section>
  );
}
