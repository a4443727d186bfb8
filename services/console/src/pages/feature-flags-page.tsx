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
  filters: { groups?: { rollout_percentage?: number | null; properties?: unknown[] }[] } & Record<string, unknown>;
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
                    <ConditionsEditor flag={flag} onSave={(filters) => void update(flag, { filters })} />
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

interface PropertyFilter {
  key: string;
  value: unknown;
  operator?: string;
  type?: string;
}
type ConditionGroup = { rollout_percentage?: number | null; properties?: PropertyFilter[] } & Record<string, unknown>;

const describeFilter = (f: PropertyFilter) => `${f.type ?? 'person'} ${f.key} ${f.operator ?? 'exact'} ${Array.isArray(f.value) ? f.value.join(' or ') : String(f.value)}`;

/**
 * The flag's release condition groups: each matches when all its property filters do, then lets
 * its rollout percentage through. Groups and person property filters can be added and removed;
 * filters of other kinds are kept as they are.
 */
function ConditionsEditor({ flag, onSave }: { flag: FeatureFlag; onSave: (filters: FeatureFlag['filters']) => void }) {
  const [groups, setGroups] = useState<ConditionGroup[]>((flag.filters.groups ?? []) as ConditionGroup[]);
  const [drafts, setDrafts] = useState<Record<number, { key: string; value: string }>>({});
  const change = (index: number, update: (group: ConditionGroup) => ConditionGroup) => setGroups(groups.map((g, i) => (i === index ? update(g) : g)));
  const label = (i: number, what: string) => `${flag.key} condition ${i + 1} ${what}`;
  return (
    <form
      class="rollout"
      onSubmit={(e) => {
        e.preventDefault();
        onSave({ ...flag.filters, groups: groups.map((g) => ({ ...g, properties: g.properties ?? [], rollout_percentage: g.rollout_percentage ?? 100 })) });
      }}
    >
      {groups.map((g, i) => {
        const draft = drafts[i] ?? { key: '', value: '' };
        return (
          <fieldset class="condition" data-condition={i + 1}>
            <legend>Condition {i + 1}</legend>
            <ul aria-label={label(i, 'filters')}>
              {(g.properties ?? []).length === 0 && <li>Everyone</li>}
              {(g.properties ?? []).map((f, j) => (
                <li>
                  {describeFilter(f)}{' '}
                  <button type="button" class="secondary" aria-label={`${label(i, 'remove filter')} ${j + 1}`} onClick={() => change(i, (group) => ({ ...group, properties: (group.properties ?? []).filter((_, k) => k !== j) }))}>
                    ×
                  </button>
                </li>
              ))}
            </ul>
            <label class="inline">
              Person property
              <input aria-label={label(i, 'property key')} value={draft.key} onInput={(e) => setDrafts({ ...drafts, [i]: { ...draft, key: (e.target as HTMLInputElement).value } })} />
            </label>
            <label class="inline">
              equals
              <input aria-label={label(i, 'property value')} value={draft.value} onInput={(e) => setDrafts({ ...drafts, [i]: { ...draft, value: (e.target as HTMLInputElement).value } })} />
            </label>
            <button
              type="button"
              class="secondary"
              disabled={!draft.key}
              onClick={() => {
                change(i, (group) => ({ ...group, properties: [...(group.properties ?? []), { key: draft.key, value: draft.value, operator: 'exact', type: 'person' }] }));
                setDrafts({ ...drafts, [i]: { key: '', value: '' } });
              }}
            >
              Add filter
            </button>
            <label class="inline">
              Rollout
              <input
                type="number"
                min={0}
                max={100}
                aria-label={label(i, 'rollout percentage')}
                value={g.rollout_percentage ?? 100}
                onInput={(e) => change(i, (group) => ({ ...group, rollout_percentage: Number((e.target as HTMLInputElement).value) }))}
              />
              %
            </label>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setGroups(groups.filter((_, k) => k !== i));
                setDrafts({});
              }}
            >
              Remove condition {i + 1}
            </button>
          </fieldset>
        );
      })}
      <button type="button" class="secondary" onClick={() => setGroups([...groups, { properties: [], rollout_percentage: 100 }])}>
        Add condition group
      </button>
      <button type="submit">Save conditions</button>
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
