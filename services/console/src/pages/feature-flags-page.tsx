import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';
import { ScrollArea } from '../components/scroll-area.js';

interface FeatureFlag {
  id: number;
  key: string;
  name: string;
  active: boolean;
  filters: { groups?: { rollout_percentage?: number | null; properties?: unknown[] }[] };
}

interface FlagsAnswer {
  flags: Record<string, { enabled: boolean; variant?: string | null; reason?: { description?: string } }>;
}

export function FeatureFlagsPage() {
  const { api } = useConsole();
  const flags = useLoad(() => api.project<{ results: FeatureFlag[] }>('GET', '/feature_flags/'), [api]);
  const [error, setError] = useState<unknown>(null);

  async function update(flag: FeatureFlag, change: Partial<FeatureFlag>) {
    setError(null);
    try {
      await api.project('PATCH', `/feature_flags/${flag.id}/`, change);
      flags.reload();
    } catch (e) {
      setError(e);
    }
  }

  const list = flags.data?.results ?? [];
  return (
    <section>
      <h1>Feature flags</h1>
      <ErrorMessage error={flags.error ?? error} />
      {flags.data && list.length === 0 && <p class="empty">No feature flags yet. Create one with POST /api/environments/:id/feature_flags/ (PostHog's flag API).</p>}
      {list.length > 0 && (
        <ScrollArea label="Feature flags">
          <table class="results">
            <caption class="visually-hidden">Feature flags</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Release conditions</th>
                <th scope="col">Enabled</th>
              </tr>
            </thead>
            <tbody>
              {list.map((flag) => (
                <tr>
                  <td>
                    <code>{flag.key}</code>
                  </td>
                  <td>{flag.name}</td>
                  <td>
                    <RolloutEditor flag={flag} onSave={(filters) => void update(flag, { filters })} />
                  </td>
                  <td>
                    <label class="inline">
                      <input type="checkbox" checked={flag.active} onChange={() => void update(flag, { active: !flag.active })} /> <span class="visually-hidden">{flag.key} enabled</span>
                      {flag.active ? 'On' : 'Off'}
                    </label>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
      <DecideCheck />
    </section>
  );
}

/** Each release condition's rollout percentage, editable; its property conditions are kept as they are. */
function RolloutEditor({ flag, onSave }: { flag: FeatureFlag; onSave: (filters: FeatureFlag['filters']) => void }) {
  const groups = flag.filters.groups ?? [];
  const [rollouts, setRollouts] = useState(groups.map((g) => g.rollout_percentage ?? 100));
  return (
    <form
      class="rollout"
      onSubmit={(e) => {
        e.preventDefault();
        onSave({ ...flag.filters, groups: groups.map((g, i) => ({ ...g, rollout_percentage: rollouts[i] ?? 100 })) });
      }}
    >
      {groups.map((g, i) => (
        <label class="inline">
          {g.properties?.length ? `${g.properties.length} condition(s),` : 'Everyone,'}
          <input
            type="number"
            min={0}
            max={100}
            aria-label={`${flag.key} condition ${i + 1} rollout percentage`}
            value={rollouts[i]}
            onInput={(e) => setRollouts(rollouts.map((r, j) => (j === i ? Number((e.target as HTMLInputElement).value) : r)))}
          />
          %
        </label>
      ))}
      <button type="submit" class="secondary">
        Save rollout
      </button>
    </form>
  );
}

/** What an SDK would be told: the same /flags call posthog-js makes, with this project's token. */
function DecideCheck() {
  const { project } = useConsole();
  const [distinctId, setDistinctId] = useState('');
  const [answer, setAnswer] = useState<{ data?: FlagsAnswer; error?: unknown }>({});

  async function check(e: Event) {
    e.preventDefault();
    try {
      const response = await fetch('/flags/?v=2', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: project.api_token, distinct_id: distinctId }) });
      const body = (await response.json()) as FlagsAnswer & { detail?: string };
      setAnswer(response.ok ? { data: body } : { error: new Error(body.detail ?? response.statusText) });
    } catch (error) {
      setAnswer({ error });
    }
  }

  return (
    <section aria-labelledby="decide-check">
      <h2 id="decide-check">What does a user get?</h2>
      <form class="builder" onSubmit={check}>
        <div class="field">
          <label for="decide-distinct-id">Distinct id</label>
          <input id="decide-distinct-id" required value={distinctId} onInput={(e) => setDistinctId((e.target as HTMLInputElement).value)} />
        </div>
        <div class="actions">
          <button type="submit">Ask /flags</button>
        </div>
      </form>
      <ErrorMessage error={answer.error} />
      {answer.data && (
        <ul class="cards" aria-label="Flags for this user">
          {Object.entries(answer.data.flags).map(([key, flag]) => (
            <li>
              <code>{key}</code>: {flag.enabled ? (flag.variant ?? 'enabled') : 'disabled'}
              {flag.reason?.description && <span class="muted"> ({flag.reason.description})</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
