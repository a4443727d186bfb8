import type { RequestHandler } from 'express';
import { badRequest } from './errors.js';

/**
 * How deep a request's JSON may nest. PostHog's capture refuses deeper than serde_json's 128; no
 * real payload comes close, and every recursive reader after the parse (structuredClone, ajv,
 * JSON.stringify, Postgres's jsonb parser) would spend stack on it, or overflow.
 */
export const MAX_JSON_DEPTH = 128;

/** Text Postgres cannot keep in text or jsonb: U+0000, and a UTF-16 surrogate without its pair. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface JsonProblem {
  attr: string | null;
  detail: string;
}

interface Node {
  value: unknown;
  depth: number;
  key: string | number | null;
  parent: Node | null;
}

/** `filters.groups[0].key`, how the API names fields, from a node's chain of keys. */
function attrOf(node: Node | null, prefix: string): string | null {
  const keys: (string | number)[] = [];
  for (let n = node; n && n.key !== null; n = n.parent) keys.unshift(n.key);
  const attr = keys.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${key}` : key), prefix);
  return attr === '' ? null : attr;
}

function unstorableProblem(text: string, node: Node | null, what: string, prefix: string): JsonProblem | null {
  if (!UNSTORABLE.test(text)) return null;
  return { attr: attrOf(node, prefix), detail: `${attrOf(node, prefix) ?? 'body'} ${what} U+0000 or an unpaired UTF-16 surrogate, which cannot be stored.` };
}

/**
 * The first part of a parsed JSON value that nests deeper than `maxDepth` or, with `storable`,
 * holds text Postgres cannot keep. Iterative, so a value nested a million levels deep cannot
 * overflow the check itself.
 */
export function jsonProblem(value: unknown, options: { maxDepth?: number; storable?: boolean; prefix?: string } = {}): JsonProblem | null {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
  const prefix = options.prefix ?? '';
  // No helper closure here: tsx would name it with a defineProperty call on every request.
  const storable = options.storable === true;
  if (typeof value === 'string') return storable ? unstorableProblem(value, null, 'contains', prefix) : null;
  // Only objects and arrays are pushed: a string needs a node of its own only to be named in a
  // problem, and a number none, so a large body's leaves cost no allocation.
  const stack: Node[] = [{ value, depth: 0, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value as object | null;
    if (v === null || typeof v !== 'object') continue;
    if (node.depth >= maxDepth) return { attr: attrOf(node, prefix), detail: `${attrOf(node, prefix) ?? 'body'} nests deeper than ${maxDepth} levels.` };
    const depth = node.depth + 1;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        const item: unknown = v[i];
        if (item !== null && typeof item === 'object') stack.push({ value: item, depth, key: i, parent: node });
        else if (storable && typeof item === 'string') {
          const problem = unstorableProblem(item, { value: item, depth, key: i, parent: node }, 'contains', prefix);
          if (problem) return problem;
        }
      }
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const item = (v as Record<string, unknown>)[key];
        const child: Node | null = (item !== null && typeof item === 'object') || storable ? { value: item, depth, key, parent: node } : null;
        if (storable) {
          const problem = unstorableProblem(key, child, 'has a key with', prefix) ?? (typeof item === 'string' ? unstorableProblem(item, child, 'contains', prefix) : null);
          if (problem) return problem;
        }
        if (child && item !== null && typeof item === 'object') stack.push(child);
      }
    }
  }
  return null;
}

/**
 * For services that store what they are sent (the api): a JSON body or query parameter Postgres
 * could not store, or a body nested absurdly deep, is a 400 naming the field, before any route
 * reads it; otherwise the database refuses it halfway through the request, as a 500.
 */
export function storableRequest(): RequestHandler {
  return (req, _res, next) => {
    const problem = jsonProblem(req.query, { storable: true }) ?? (req.body === undefined ? null : jsonProblem(req.body, { storable: true }));
    next(problem ? badRequest(problem.detail, problem.attr) : undefined);
  };
}
