import { useEffect, useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { InstallSnippet } from '../components/install-snippet.js';
import { useConsole } from '../console-context.js';
import { useEventNames, usePropertyNames } from '../use-event-names.js';
import { useLoad } from '../use-load.js';
import { ScrollArea } from '../components/scroll-area.js';

interface StoredEvent {
  uuid: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

const LIVE_EVERY_MS = 5_000;

export function EventsPage() {
  const { api, project } = useConsole();
  const names = useEventNames();
  const [event, setEvent] = useState('');
  const [property, setProperty] = useState({ key: '', value: '' });
  const [applied, setApplied] = useState({ event: '', key: '', value: '' });
  const propertyNames = usePropertyNames([event.trim()]);
  const [live, setLive] = useState(true);
  const [open, setOpen] = useState<string | null>(null);
  const events = useLoad(
    () =>
      api.project<{ results: [StoredEvent][] }>('POST', '/query/', {
        query: {
          kind: 'EventsQuery',
          select: ['*'],
          orderBy: ['timestamp DESC'],
          after: '-30d',
          limit: 100,
          ...(applied.event ? { event: applied.event } : {}),
          ...(applied.key ? { properties: [{ key: applied.key, value: applied.value, operator: 'exact', type: 'event' }] } : {}),
        },
      }),
    [api, applied],
  );

  useEffect(() => {
    if (!live) return;
    const timer = setInterval(events.reload, LIVE_EVERY_MS);
    return () => clearInterval(timer);
  }, [live, events.reload]);

  const rows = (events.data?.results ?? []).map(([e]) => e);
  const filtered = Boolean(applied.event || applied.key);
  return (
    <section>
      <div class="page-head">
        <h1>Events</h1>
        <label class="inline">
          <input type="checkbox" checked={live} onChange={(e) => setLive((e.target as HTMLInputElement).checked)} /> Live (every {LIVE_EVERY_MS / 1000} s)
        </label>
      </div>
      <form
        class="builder"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ event: event.trim(), key: property.key.trim(), value: property.value });
        }}
      >
        <datalist id="event-names">
          {names.map((name) => (
            <option value={name} />
          ))}
        </datalist>
        <datalist id="property-names">
          {propertyNames.map((name) => (
            <option value={name} />
          ))}
        </datalist>
        <div class="field">
          <label for="events-event">Event</label>
          <input id="events-event" list="event-names" placeholder="All events" value={event} onInput={(e) => setEvent((e.target as HTMLInputElement).value)} />
        </div>
        <div class="field">
          <label for="events-property">Property</label>
          <input id="events-property" list="property-names" placeholder="e.g. $browser" value={property.key} onInput={(e) => setProperty({ ...property, key: (e.target as HTMLInputElement).value })} />
        </div>
        <div class="field">
          <label for="events-value">equals</label>
          <input id="events-value" value={property.value} onInput={(e) => setProperty({ ...property, value: (e.target as HTMLInputElement).value })} />
        </div>
        <div class="actions">
          <button type="submit">Filter</button>
        </div>
      </form>
      <ErrorMessage error={events.error} />
      {events.data && rows.length === 0 && (filtered ? <p class="empty">No events match this filter in the last 30 days.</p> : <InstallSnippet project={project} />)}
      {rows.length > 0 && (
        <ScrollArea label="Newest events">
          <table class="results" data-events={rows.length}>
            <caption class="visually-hidden">Newest events</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Event</th>
                <th scope="col">Distinct id</th>
                <th scope="col">URL</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <>
                  <tr>
                    <td>{new Date(e.timestamp).toLocaleString()}</td>
                    <td>
                      <button type="button" class="link" aria-expanded={open === e.uuid} onClick={() => setOpen(open === e.uuid ? null : e.uuid)}>
                        {e.event}
                      </button>
                    </td>
                    <td>{e.distinct_id}</td>
                    <td>{String(e.properties.$current_url ?? '')}</td>
                  </tr>
                  {open === e.uuid && (
                    <tr>
                      <td colSpan={4}>
                        <pre class="code">{JSON.stringify(e, null, 2)}</pre>
                      </td>
                    </tr>
                  )}
                </>
              ))}
            </tbody>
          </table>
        </ScrollArea>
      )}
    </section>
  );
}
