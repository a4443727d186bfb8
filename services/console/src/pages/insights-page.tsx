import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { InsightResult } from '../components/insight-result.js';
import { QueryActions } from '../components/query-actions.js';
import { useConsole } from '../console-context.js';
import type { InsightSource } from '../insight-view.js';
import { useCancellableQuery } from '../use-cancellable-query.js';
import { useEventNames, usePropertyNames } from '../use-event-names.js';

type Kind = 'TrendsQuery' | 'FunnelsQuery' | 'RetentionQuery' | 'PathsQuery';
const KINDS: { kind: Kind; label: string }[] = [
  { kind: 'TrendsQuery', label: 'Trend' },
  { kind: 'FunnelsQuery', label: 'Funnel' },
  { kind: 'RetentionQuery', label: 'Retention' },
  { kind: 'PathsQuery', label: 'Paths' },
];
const PATH_TYPES = [
  ['$pageview', 'Pageviews'],
  ['$screen', 'Screens'],
  ['custom_event', 'Custom events'],
  ['', 'All events'],
];
const MATHS = [
  ['total', 'Total count'],
  ['dau', 'Unique users'],
  ['weekly_active', 'Weekly active users'],
  ['monthly_active', 'Monthly active users'],
  ['unique_session', 'Unique sessions'],
];
const RANGES = [
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
];

interface QueryResponse {
  results: unknown;
  hogql?: string;
}

export function InsightsPage() {
  const { api } = useConsole();
  const events = useEventNames();
  const [kind, setKind] = useState<Kind>('TrendsQuery');
  const [event, setEvent] = useState('$pageview');
  const [math, setMath] = useState('total');
  const [breakdown, setBreakdown] = useState('');
  const [interval, setTrendInterval] = useState('day');
  const [dateFrom, setDateFrom] = useState('-7d');
  const [steps, setSteps] = useState(['$pageview', '']);
  const [windowDays, setWindowDays] = useState(14);
  const [returning, setReturning] = useState('$pageview');
  const [period, setPeriod] = useState('Week');
  const [pathType, setPathType] = useState('$pageview');
  const [startPoint, setStartPoint] = useState('');
  const [endPoint, setEndPoint] = useState('');
  const [stepLimit, setStepLimit] = useState(5);
  const properties = usePropertyNames(kind === 'TrendsQuery' ? [event.trim()] : []);
  const query = useCancellableQuery<QueryResponse>();
  const [ran, setRan] = useState<InsightSource & Record<string, unknown>>();
  const [name, setName] = useState('');
  const [saved, setSaved] = useState<{ id?: number; error?: unknown }>({});

  function source(): InsightSource & Record<string, unknown> {
    const dateRange = { date_from: dateFrom };
    if (kind === 'TrendsQuery') {
      return {
        kind,
        series: [{ kind: 'EventsNode', event, name: event, math }],
        interval,
        dateRange,
        ...(breakdown.trim() ? { breakdownFilter: { breakdown: breakdown.trim(), breakdown_type: 'event' } } : {}),
      };
    }
    if (kind === 'FunnelsQuery') {
      return {
        kind,
        series: steps.filter((s) => s.trim()).map((s) => ({ kind: 'EventsNode', event: s.trim(), name: s.trim() })),
        dateRange,
        funnelsFilter: { funnelWindowInterval: windowDays, funnelWindowIntervalUnit: 'day' },
      };
    }
    if (kind === 'PathsQuery') {
      return {
        kind,
        dateRange,
        pathsFilter: {
          includeEventTypes: pathType ? [pathType] : [],
          stepLimit,
          ...(startPoint.trim() ? { startPoint: startPoint.trim() } : {}),
          ...(endPoint.trim() ? { endPoint: endPoint.trim() } : {}),
        },
      };
    }
    return {
      kind,
      retentionFilter: {
        period,
        totalIntervals: 8,
        retentionType: 'retention_first_time',
        targetEntity: { id: event, type: 'events' },
        returningEntity: { id: returning, type: 'events' },
      },
    };
  }

  function run(e: Event) {
    e.preventDefault();
    const s = source();
    setRan(s);
    setSaved({});
    void query.run(s);
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!ran) return;
    try {
      const insight = await api.project<{ id: number }>('POST', '/insights/', { name: name.trim() || `${ran.kind} insight`, query: { kind: 'InsightVizNode', source: ran } });
      setSaved({ id: insight.id });
    } catch (error) {
      setSaved({ error });
    }
  }

  const eventPicker = (id: string, label: string, value: string, onChange: (v: string) => void) => (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} list="event-names" value={value} required onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
    </div>
  );

  return (
    <section>
      <h1>Insights</h1>
      <datalist id="event-names">
        {events.map((name) => (
          <option value={name} />
        ))}
      </datalist>
      <datalist id="property-names">
        {properties.map((name) => (
          <option value={name} />
        ))}
      </datalist>
      <div role="tablist" aria-label="Insight kind" class="tabs">
        {KINDS.map((k) => (
          <button type="button" role="tab" aria-selected={kind === k.kind} class={kind === k.kind ? '' : 'secondary'} onClick={() => setKind(k.kind)}>
            {k.label}
          </button>
        ))}
      </div>
      <form class="builder" onSubmit={run}>
        {kind === 'TrendsQuery' && (
          <>
            {eventPicker('trend-event', 'Event', event, setEvent)}
            <Select id="trend-math" label="Measured as" value={math} options={MATHS} onChange={setMath} />
            <div class="field">
              <label for="trend-breakdown">Breakdown by event property</label>
              <input id="trend-breakdown" list="property-names" placeholder="e.g. $browser" value={breakdown} onInput={(e) => setBreakdown((e.target as HTMLInputElement).value)} />
            </div>
            <Select id="trend-interval" label="Interval" value={interval} options={['hour', 'day', 'week', 'month'].map((i) => [i, i])} onChange={setTrendInterval} />
          </>
        )}
        {kind === 'FunnelsQuery' && (
          <>
            {steps.map((step, i) =>
              eventPicker(`funnel-step-${i}`, `Step ${i + 1}`, step, (v) => setSteps(steps.map((s, j) => (j === i ? v : s)))),
            )}
            <div class="field">
              <button type="button" class="secondary" onClick={() => setSteps([...steps, ''])}>
                Add step
              </button>
            </div>
            <div class="field">
              <label for="funnel-window">Conversion window (days)</label>
              <input id="funnel-window" type="number" min={1} max={365} value={windowDays} onInput={(e) => setWindowDays(Number((e.target as HTMLInputElement).value))} />
            </div>
          </>
        )}
        {kind === 'RetentionQuery' && (
          <>
            {eventPicker('retention-start', 'Did this first', event, setEvent)}
            {eventPicker('retention-return', 'Came back to do', returning, setReturning)}
            <Select id="retention-period" label="Period" value={period} options={['Day', 'Week', 'Month'].map((p) => [p, p])} onChange={setPeriod} />
          </>
        )}
        {kind === 'PathsQuery' && (
          <>
            <Select id="paths-type" label="Steps are" value={pathType} options={PATH_TYPES} onChange={setPathType} />
            <div class="field">
              <label for="paths-start">Starts at</label>
              <input id="paths-start" placeholder="e.g. https://example.com/pricing" value={startPoint} onInput={(e) => setStartPoint((e.target as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="paths-end">Ends at</label>
              <input id="paths-end" value={endPoint} onInput={(e) => setEndPoint((e.target as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="paths-steps">Steps</label>
              <input id="paths-steps" type="number" min={2} max={20} value={stepLimit} onInput={(e) => setStepLimit(Number((e.target as HTMLInputElement).value))} />
            </div>
          </>
        )}
        {kind !== 'RetentionQuery' && <Select id="date-range" label="Date range" value={dateFrom} options={RANGES} onChange={setDateFrom} />}
        <QueryActions query={query} submitLabel="Calculate" busyLabel="Calculating" />
      </form>
      <ErrorMessage error={query.error} />
      {ran && query.data && !query.error && !query.running && (
        <div class="insight-result">
          <InsightResult title="Insight" source={ran} results={query.data.results} />
          <form class="save" onSubmit={save}>
            <label for="insight-name">Name</label>
            <input id="insight-name" value={name} placeholder="e.g. Weekly signups" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            <button type="submit">Save insight</button>
            {saved.id !== undefined && <span role="status">Saved as insight {saved.id}.</span>}
          </form>
          <ErrorMessage error={saved.error} />
          {query.data.hogql && (
            <details open>
              <summary>HogQL it ran</summary>
              <pre class="code" data-hogql>
                {query.data.hogql}
              </pre>
            </details>
          )}
        </div>
      )}
    </section>
  );
}

function Select({ id, label, value, options, onChange }: { id: string; label: string; value: string; options: string[][]; onChange: (v: string) => void }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map(([v, text]) => (
          <option value={v}>{text}</option>
        ))}
      </select>
    </div>
  );
}
