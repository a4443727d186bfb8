import { useEffect } from 'preact/hooks';
import { ChartView } from '../components/chart.js';
import { ErrorMessage } from '../components/error-message.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';

type Part<T> = { ok: true; value: T } | { ok: false; error: string };

interface StatusReport {
  generatedAt: string;
  services: { name: string; healthy: boolean; ready: boolean; detail: string | null }[];
  consumerLag: Part<{ group: string; total: number }>;
  events: Part<{ lastMinute: number; lastHour: number }>;
  ingestionWarnings: Part<{ lastHour: number; lastDay: number }>;
  deadLetters: Part<{ topic: string; messages: number }>;
  deletions: Part<{ queued: number; nextRun: string | null }>;
}

interface StatusHistory {
  interval_seconds: number;
  series: { name: string; points: { at: number; perSecond: number }[] }[];
}

const CHART_TITLES: Record<string, string> = {
  capture_events_accepted: 'Capture: events accepted per second',
  ingest_events_written: 'Ingest: events written per second',
  decide_requests: 'Decide: requests per second',
  http_errors: 'Errors (5xx answers) per second',
};

/** The api samples every 15 s; reading as often shows each new sample. */
const REFRESH_EVERY_MS = 15_000;

const time = (at: number) => new Date(at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function figure<T>(part: Part<T>, show: (value: T) => string): string {
  return part.ok ? show(part.value) : `unavailable: ${part.error}`;
}

/** What /status shows, and the last hour's rates sampled from the services' metrics. */
export function StatusPage() {
  const { api } = useConsole();
  const report = useLoad(() => api.request<StatusReport>('GET', '/status/'), [api]);
  const history = useLoad(() => api.request<StatusHistory>('GET', '/status/history/'), [api]);
  useEffect(() => {
    const timer = setInterval(() => {
      report.reload();
      history.reload();
    }, REFRESH_EVERY_MS);
    return () => clearInterval(timer);
  }, [report.reload, history.reload]);

  const status = report.data;
  return (
    <section>
      <div class="page-head">
        <h1>Status</h1>
      </div>
      <ErrorMessage error={report.error ?? history.error} />
      {status && (
        <>
          <table class="services" aria-label="Services">
            <thead>
              <tr>
                <th scope="col">Service</th>
                <th scope="col">Healthy</th>
                <th scope="col">Ready</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {status.services.map((s) => (
                <tr data-service={s.name}>
                  <th scope="row">{s.name}</th>
                  <td>{s.healthy ? 'yes' : 'no'}</td>
                  <td>{s.ready ? 'yes' : 'no'}</td>
                  <td>{s.detail ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <dl class="status-figures">
            <dt>Events stored</dt>
            <dd>{figure(status.events, (v) => `${v.lastMinute} in the last minute, ${v.lastHour} in the last hour`)}</dd>
            <dt>Ingest consumer lag</dt>
            <dd>{figure(status.consumerLag, (v) => `${v.total} messages (${v.group})`)}</dd>
            <dt>Ingestion warnings</dt>
            <dd>{figure(status.ingestionWarnings, (v) => `${v.lastHour} in the last hour, ${v.lastDay} in the last day`)}</dd>
            <dt>Dead letters</dt>
            <dd>{figure(status.deadLetters, (v) => `${v.messages} on ${v.topic}`)}</dd>
            <dt>Event deletions</dt>
            <dd>{figure(status.deletions, (v) => `${v.queued} queued; next run ${v.nextRun ?? 'not scheduled (no worker has started)'}`)}</dd>
          </dl>
          <p class="muted">Report of {new Date(status.generatedAt).toLocaleString()}</p>
        </>
      )}
      {history.data && (
        <div class="tiles">
          {history.data.series.map((s) => (
            <article class="tile" data-rate={s.name}>
              <h2>{CHART_TITLES[s.name] ?? s.name}</h2>
              {s.points.length === 0 ? (
                <p class="empty">No samples yet: the api samples the services every {history.data!.interval_seconds} s, so the chart fills within a minute.</p>
              ) : (
                <ChartView type="line" title={CHART_TITLES[s.name] ?? s.name} labels={s.points.map((p) => time(p.at))} series={[{ label: 'per second', data: s.points.map((p) => Math.round(p.perSecond * 100) / 100) }]} />
              )}
            </article>
          ))}
        </div>
      )}
    </section>
  );
}
