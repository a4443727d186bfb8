import { LRUCache } from 'lru-cache';
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

/** What a request's answer can depend on besides the stored data (see `RememberedAnswers.keyOf`). */
export interface AnswerKeyParts {
  contentType: string | undefined;
  contentEncoding: string | undefined;
  data: string;
  compression: string;
  ip: string | undefined;
  body: Buffer;
}

/** What went into an answer beyond the request. */
export interface AnswerSources {
  /** The person came from this process's copy of it, which is replaced when the person changes. */
  personFromCopy: boolean;
  /** A store failed, so the answer left out what needed it. */
  storeFailed: boolean;
  /** Stored group properties were read. */
  readStoredGroups: boolean;
  definitions: Pick<ProjectFlags, 'needs' | 'continuityKeys'>;
}

/**
 * The rule for remembering an answer: only when everything that went into it besides the
 * request is something the check on giving it again sees change (token, definitions, the
 * person's copy). Not when a store failed (the answer is short of flags), nor when it read what
 * nothing tells the process of a change to: stored group properties, listed cohort membership
 * (a static cohort's, or a behavioural one's, which the worker recalculates on its schedule),
 * continuity overrides, or the time, which flags comparing dates read.
 */
export function mayRemember(sources: AnswerSources): boolean {
  const { needs, continuityKeys } = sources.definitions;
  return sources.personFromCopy && !sources.storeFailed && !sources.readStoredGroups && !needs.clock && !needs.listedCohorts && continuityKeys.length === 0;
}

/** Bodies longer than this are not remembered: SDKs ask with small ones, and a key holds the whole body. */
const MAX_BODY_BYTES = 4096;

/**
 * Answers by request, for the requests that come again and again with the same body: posthog-node
 * asks for every flag check made without local evaluation, posthog-js on every page view. An
 * answer is remembered only as `mayRemember` allows, and given again only while the token,
 * definitions and person copy it came from are still the ones held. At most `maxEntries` are
 * kept; past that the least recently used go first.
 */
export class RememberedAnswers {
  private readonly answers: LRUCache<string, RememberedAnswer> | null;

  constructor(maxEntries: number) {
    this.answers = maxEntries > 0 ? new LRUCache({ max: maxEntries }) : null;
  }

  /**
   * What the request's answer can depend on: what decoding reads (body, content headers, the
   * `data` and `compression` query parameters; not the others, such as posthog-js's cache-busting
   * `_`) and the client's address (location). Null when the request is not one to remember: too
   * large a body, or remembering is off.
   */
  keyOf(request: AnswerKeyParts): string | null {
    if (this.answers === null || request.body.length > MAX_BODY_BYTES) return null;
    // JSON text ends where it ends, so no two requests' parts and body run together into one key.
    const parts = JSON.stringify([request.contentType ?? '', request.contentEncoding ?? '', request.data, request.compression, request.ip ?? '']);
    return `${parts}${request.body.toString('latin1')}`;
  }

  get(key: string): RememberedAnswer | undefined {
    return this.answers?.get(key);
  }

  remember(key: string, answer: RememberedAnswer): void {
    this.answers?.set(key, answer);
  }
}
