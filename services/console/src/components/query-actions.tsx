import type { ComponentChildren } from 'preact';

interface QueryActionsProps {
  query: { running: boolean; elapsed: number; cancel(): Promise<void> };
  /** The submit button's label, e.g. "Run". */
  submitLabel: string;
  /** The progress line's verb while it runs, e.g. "Running". */
  busyLabel: string;
  children?: ComponentChildren;
}

/** A query form's buttons: submit, and while the query runs, Cancel and the seconds it has taken. */
export function QueryActions({ query, submitLabel, busyLabel, children }: QueryActionsProps) {
  return (
    <div class="actions">
      <button type="submit" disabled={query.running}>
        {submitLabel}
      </button>
      {query.running && (
        <>
          <button type="button" class="secondary" onClick={() => void query.cancel()}>
            Cancel
          </button>
          <span role="status" aria-busy="true">
            {busyLabel}… {query.elapsed} s
          </span>
        </>
      )}
      {children}
    </div>
  );
}
