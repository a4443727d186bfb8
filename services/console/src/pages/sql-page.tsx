import { useState } from 'preact/hooks';
import { ErrorMessage } from '../components/error-message.js';
import { QueryActions } from '../components/query-actions.js';
import { ResultsTable } from '../components/results-table.js';
import { toCsv } from '../csv.js';
import { download } from '../download.js';
import { useCancellableQuery } from '../use-cancellable-query.js';

interface HogQLResponse {
  columns: string[];
  results: unknown[][];
  hasMore: boolean;
  hogql: string;
}

const EXAMPLE = 'SELECT event, count() AS c\nFROM events\nWHERE timestamp > now() - INTERVAL 7 DAY\nGROUP BY event\nORDER BY c DESC';

export function SqlPage() {
  const [sql, setSql] = useState(EXAMPLE);
  const query = useCancellableQuery<HogQLResponse>();
  const result = query.data;

  return (
    <section>
      <h1>SQL</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void query.run({ kind: 'HogQLQuery', query: sql });
        }}
      >
        <label for="hogql">HogQL query</label>
        <textarea
          id="hogql"
          class="code"
          rows={8}
          spellcheck={false}
          value={sql}
          onInput={(e) => setSql((e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            // Ctrl/Cmd+Enter runs, as in PostHog's editor.
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) (e.currentTarget.form as HTMLFormElement).requestSubmit();
          }}
        />
        <QueryActions query={query} submitLabel="Run" busyLabel="Running">
          {result && !query.running && (
            <button type="button" class="secondary" onClick={() => download('query.csv', 'text/csv', toCsv(result.columns, result.results))}>
              Download CSV
            </button>
          )}
        </QueryActions>
      </form>
      <ErrorMessage error={query.error} />
      {result && !query.error && (
        <div class="query-result">
          <p class="muted" role="status">
            {result.results.length} {result.results.length === 1 ? 'row' : 'rows'}
            {result.hasMore ? ' (more rows exist: add a LIMIT to choose how many)' : ''}
          </p>
          <ResultsTable caption="Query results" columns={result.columns} rows={result.results} />
        </div>
      )}
    </section>
  );
}
