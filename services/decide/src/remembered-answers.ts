import type { FlagResult } from '@tributary/flags';
import type { ProjectFlags } from './flag-definitions.js';

/**
 * An answer and what it was worked out from beyond the request itself. Each of those is held in
 * memory and replaced, never changed, when it changes: the answer stands while all are the same
 * objects (see `RememberedAnswers`).
 */
export interface RememberedAnswer {
  token: string;
  teamId: number;
  distinctId: string;
  /** The project's definitions as loaded: a change, or a reload, makes a new object. */
  definitions: ProjectFlags;
  /** The person's properties as this process's copy of the person held them (see PersonCache). */
  personProperties: Record<string, unknown>;
  /** The result of each of the definitions' flags, in their order. */
  results: FlagResult[];
}

/** Bodies longer than this are not remembered: SDKs ask with small ones, and a key holds the whole body. */
const MAX_BODY_BYTES = 4096;

/**
 * Answers by request, for the requests that come again and again with the same body: posthog-node
 * asks for every flag check made without local evaluation, posthog-js on every page view. An
 * answer is a function of the request, the project's definitions, the person's stored properties
 * and, for flags comparing dates, the time; it is remembered only when nothing else went into it
 * (no static cohorts, continuity overrides or stored group properties read, no date compared, no
 * store failed) and given again only while the token, definitions and person copy it came from
 * are still the ones held. At most `maxEntries` are kept; past that the oldest go first.
 */
export class RememberedAnswers {
  private readonly answers = new Map<string, RememberedAnswer>();

  constructor(private readonly maxEntries: number) {}

  /**
   * What the request's answer can depend on: what decoding reads (body, content headers, the
   * `data` and `compression` query parameters; not the others, such as posthog-js's cache-busting
   * `_`) and the client's address (location). Null when the request is not one to remember: too
   * large a body, or remembering is off.
   */
  keyOf(request: { contentType: string | undefined; contentEncoding: string | undefined; data: string; compression: string; ip: string | undefined; body: Buffer }): string | null {
    if (this.maxEntries === 0 || request.body.length > MAX_BODY_BYTES) return null;
    // JSON text ends where it ends, so no two requests' parts and body run together into one key.
    const parts = JSON.stringify([request.contentType ?? '', request.contentEncoding ?? '', request.data, request.compression, request.ip ?? '']);
    return `${parts}${request.body.toString('latin1')}`;
  }

  get(key: string): RememberedAnswer | undefined {
    return this.answers.get(key);
  }

  remember(key: string, answer: RememberedAnswer): void {
    if (this.answers.size >= this.maxEntries && !this.answers.has(key)) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, answer);
  }
}
