export type ControlProps = { id: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string };

/** A labelled control with its hint and its error, both read out with it. */
export function Field({ id, label, error, hint, children }: { id: string; label: string; error?: string | undefined; hint?: string | undefined; children: (props: ControlProps) => preact.JSX.Element }) {
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, ...(error ? { 'aria-invalid': 'true' as const } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {hint && <span id={`${id}-hint`} class="muted hint">{hint}</span>}
      {error && <span id={`${id}-error`} class="field-error">{error}</span>}
    </div>
  );
}
