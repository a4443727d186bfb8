import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { ResultsTable } from '../components/results-table.js';
import { useConsole } from '../console-context.js';
import { useLoad } from '../use-load.js';

interface Person {
  uuid: string;
  name: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
}

export function PersonsPage() {
  const { api } = useConsole();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [open, setOpen] = useState<Person | null>(null);
  const persons = useLoad(() => api.project<{ results: Person[] }>('GET', `/persons/?search=${encodeURIComponent(applied)}`), [api, applied]);
  const list = persons.data?.results ?? [];

  return (
    <section>
      <h1>Persons</h1>
      <form
        class="builder"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(search.trim());
        }}
      >
        <div class="field">
          <label for="persons-search">Distinct id, email or property value</label>
          <input id="persons-search" type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        </div>
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorMessage error={persons.error} />
      {persons.data && list.length === 0 && <p class="empty">{applied ? 'No person matches.' : 'No persons yet: a person is made by the first event with its distinct id.'}</p>}
      <div class="split">
        <ul class="cards" aria-label="Persons">
          {list.map((p) => (
            <li>
              <button type="button" class="link" aria-pressed={open?.uuid === p.uuid} onClick={() => setOpen(p)}>
                {p.name}
              </button>
              <p class="muted">{p.distinct_ids.join(', ')}</p>
            </li>
          ))}
        </ul>
        {open && <PersonDetail person={open} />}
      </div>
    </section>
  );
}

function PersonDetail({ person }: { person: Person }) {
  const { api } = useConsole();
  const events = useLoad(
    () =>
      api.project<{ columns: string[]; results: unknown[][] }>('POST', '/query/', {
        query: {
          kind: 'HogQLQuery',
          query: 'SELECT timestamp, event, distinct_id FROM events WHERE has({ids}, distinct_id) ORDER BY timestamp DESC LIMIT 50',
          values: { ids: person.distinct_ids },
        },
      }),
    [api, person.uuid],
  );
  return (
    <article class="detail" aria-labelledby="person-name">
      <h2 id="person-name">{person.name}</h2>
      <h3>Distinct ids</h3>
      <p>{person.distinct_ids.join(', ')}</p>
      <h3>Properties</h3>
      <ResultsTable caption="Properties" columns={['Property', 'Value']} rows={Object.entries(person.properties)} />
      <h3>Latest events</h3>
      <ErrorMessage error={events.error} />
      {events.data && <ResultsTable caption="Latest events" columns={events.data.columns} rows={events.data.results} />}
    </article>
  );
}
