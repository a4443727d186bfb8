import type { ComponentChildren } from 'preact';

/** A wide table's scroll box, focusable and named so keyboard users can scroll it too. */
export function ScrollArea({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
