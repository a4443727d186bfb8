import { topLevelContainer } from './json-spans.js';

/** Where a capture payload holds its events (see `parseCaptureRequest`). */
export type PayloadShape = 'array' | 'batch' | 'event';

/**
 * The JSON text of each event of a capture payload as the client sent it, in order: the
 * elements of a top-level array or of a batch envelope's `batch` array, or the single event
 * itself. `text` is what `JSON.parse` read the payload from, `shape` and `count` what was read
 * from it; null when the text does not agree with them, so that the caller serialises the
 * events instead.
 */
export function eventTexts(text: string, shape: PayloadShape, count: number): string[] | null {
  const spans = eventSpans(text, shape);
  if (spans === null || spans.length !== count * 2) return null;
  const texts: string[] = [];
  for (let span = 0; span < spans.length; span += 2) texts.push(text.slice(spans[span], spans[span + 1]));
  return texts;
}

function eventSpans(text: string, shape: PayloadShape): number[] | null {
  // The batch is read as the envelope is: one pass over the text.
  const top = topLevelContainer(text, shape === 'batch' ? 'batch' : undefined);
  if (top === null) return null;
  if (shape === 'array') return top.kind === 'array' ? top.spans : null;
  if (top.kind !== 'object') return null;
  if (shape === 'event') return [top.start, top.end];
  return top.member?.kind === 'array' ? top.member.spans : null;
}
