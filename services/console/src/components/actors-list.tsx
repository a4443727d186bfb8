import { useEffect, useState } from 'preact/hooks';
import { actorRows, ACTORS_PAGE } from '../actors-view.js';
import { useCancellableQuery } from '../use-cancellable-query.js';
import { ErrorMessage } from './error-message.js';
import { ScrollArea } from './scroll-area.js';

/** The persons behind a point of an insight, a page at a time, from the ActorsQuery `query` opens. */
export function ActorsList({ query, onClose }: { query: object; onClose: () => void }) {
  const [offset, setOffset] = useState(0);
  const answer = useCancellableQuery<{ columns?: string[]; results?: unknown[][]; hasMore?: boolean }>();
  useEffect(() => setOffset(0), [query]);
  useEffect(() => {
    void answer.run({ ...query, limit: ACTORS_PAGE, offset });
  }, [query, offset]);
  const rows = answer.data ? actorRows(answer.data) : [];
  return (
    <section class="actors" aria-label="Persons behind this point">
      <header>
        <h3>Persons</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      <ErrorMessage error={answer.error} />
      {answer.running && <p role="status">Loading persons…</p>}
      {!answer.running && answer.data && (
        <>
          <ScrollArea label="Persons">
            <table class="results" data-actors={JSON.stringify(rows.map((r) => r.id))}>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Distinct ids</th>
                  {rows.some((r) => r.events !== null) && <th scope="col">Events</th>}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr>
                    <td title={r.id}>{r.name}</td>
                    <td>{r.distinctIds}</td>
                    {r.events !== null && <td>{r.events}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollArea>
          {rows.length === 0 && <p class="muted">No persons here.</p>}
          <nav class="pager" aria-label="Pages of persons">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - ACTORS_PAGE))}>
              Previous
            </button>
            <span>
              {rows.length === 0 ? 0 : offset + 1}–{offset + rows.length}
            </span>
            <button type="button" disabled={!answer.data.hasMore} onClick={() => setOffset(offset + ACTORS_PAGE)}>
              Next
            </button>
          </nav>
        </>
      )}
    </section>
  );
}
