import { PropertyFilterError } from '@tributary/property-filters';
import type { Call, Expr, SelectLike } from './ast.js';
import { queryError } from './errors.js';
import { replaceNodes } from './replace-nodes.js';
import type { ActionDefinition } from './action-definition.js';

/**
 * What actions (PostHog's `Action` with its `ActionStepJSON` steps) need besides their conditions
 * (`actionExpr`, in `property-filter-expr.ts`, since a step's filters may name cohorts that name
 * actions): CSS selectors as patterns over `elements_chain`, and `matchesAction(...)` in HogQL.
 */

export const escapeRegex = (value: string): string => value.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/**
 * One compound selector (`tag.class#id[attr="v"]`) as a regular expression over one element of
 * `elements_chain` (`tag.c1.c2:attr_id="x"href="..."`); posthog-js writes classes and attributes
 * sorted, so the selector's are sorted too.
 */
function elementPattern(compound: string, selector: string): string {
  const parts = /^([A-Za-z][\w-]*|\*)?((?:[.#][\w-]+|\[[\w-]+(?:=(?:"[^"]*"|'[^']*'|[\w-]+))?\])*)$/.exec(compound);
  if (!parts) throw new PropertyFilterError(`selector ${JSON.stringify(selector)}: only tag, .class, #id and [attribute="value"] with descendant and > combinators are supported`);
  const tag = parts[1] && parts[1] !== '*' ? escapeRegex(parts[1]) : '[\\w-]*';
  const classes: string[] = [];
  const attributes: string[] = [];
  for (const [token] of (parts[2] ?? '').matchAll(/[.#][\w-]+|\[[^\]]+\]/g)) {
    if (token.startsWith('.')) classes.push(token.slice(1));
    else if (token.startsWith('#')) attributes.push(`attr_id="${escapeRegex(token.slice(1))}"`);
    else {
      const [, name = '', value] = /^\[([\w-]+)(?:=["']?(.*?)["']?)?\]$/.exec(token) ?? [];
      const key = name === 'id' ? 'attr_id' : name === 'href' || name === 'text' ? name : `attr__${name}`;
      attributes.push(value === undefined ? `${escapeRegex(key)}="` : `${escapeRegex(key)}="${escapeRegex(value)}"`);
    }
  }
  const anyClasses = '(?:\\.[^.:;"]+)*';
  const classPattern = classes.sort().map((c) => `\\.${escapeRegex(c)}${anyClasses}`).join('');
  // Each required attribute starts a key: right after the `:`, or after the closing quote of the value before it.
  const attributePattern = attributes.length ? `:${attributes.sort().map((a) => `(?:[^;]*")?${a}`).join('')}[^;]*` : '(?::[^;]*)?';
  return `${tag}${anyClasses}${classPattern}${attributePattern}(?:;|$)`;
}

/**
 * A CSS selector as PostHog's `selector_to_expr` reads it: a match anywhere in the chain (the
 * clicked element or one around it), the selector's last element first, since the chain lists the
 * clicked element first and its ancestors after it.
 */
export function selectorRegex(selector: string): string {
  const tokens = selector.trim().replace(/\s*>\s*/g, ' > ').split(/\s+/);
  if (tokens.length === 0 || tokens[0] === '' || tokens[0] === '>' || tokens.at(-1) === '>') throw new PropertyFilterError(`selector ${JSON.stringify(selector)} is not a selector`);
  const compounds: { pattern: string; child: boolean }[] = [];
  let child = false;
  for (const token of tokens) {
    if (token === '>') {
      if (child) throw new PropertyFilterError(`selector ${JSON.stringify(selector)} is not a selector`);
      child = true;
      continue;
    }
    compounds.push({ pattern: elementPattern(token, selector), child });
    child = false;
  }
  compounds.reverse();
  let regex = `(?:^|;)${compounds[0]!.pattern}`;
  for (let i = 1; i < compounds.length; i++) {
    // The element after a `>` is the next one in the chain; after a space, any later one.
    regex += compounds[i - 1]!.child ? compounds[i]!.pattern : `(?:[^;]*;)*${compounds[i]!.pattern}`;
  }
  return regex;
}

/** The action an `ActionsNode` or `matchesAction` names, looked up among those the caller loaded for the project. */
export function projectAction(context: { actions?: ReadonlyMap<number, ActionDefinition> }, id: number): ActionDefinition {
  const action = context.actions?.get(id);
  if (!action) throw queryError(`action ${id} does not exist in this project`);
  return action;
}

const isMatchesAction = (node: Record<string, unknown>): node is Call & Record<string, unknown> => node.node === 'Call' && node.name === 'matchesAction';

/** What a query's `matchesAction(...)` calls name (an action's name, or its id), so the caller can look them up. */
export function matchesActionRefs(query: SelectLike): (string | number)[] {
  const refs = new Set<string | number>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const node = value as Record<string, unknown>;
    if (isMatchesAction(node)) {
      const arg = node.args[0];
      if (arg?.node === 'Constant' && (typeof arg.value === 'string' || typeof arg.value === 'number')) refs.add(arg.value);
    }
    Object.values(node).forEach(visit);
  };
  visit(query);
  return [...refs];
}

/**
 * The query with each `matchesAction('name')` (or `matchesAction(id)`) replaced by the action's
 * condition, before it is resolved: the condition reads the events row the call stands in, and is
 * guarded like the rest of the query. An action the project does not have is refused by name.
 */
export function expandMatchesAction<T extends SelectLike>(query: T, actions: ReadonlyMap<string | number, Expr>): T {
  return replaceNodes(query, (node) => {
    if (!isMatchesAction(node)) return undefined;
    const arg = node.args[0];
    if (node.args.length !== 1 || arg?.node !== 'Constant' || (typeof arg.value !== 'string' && typeof arg.value !== 'number')) {
      throw queryError('matchesAction takes one argument: the name (or id) of one of the project\'s actions');
    }
    const expr = actions.get(arg.value);
    if (!expr) throw queryError(`matchesAction: the project has no action ${JSON.stringify(arg.value)}`);
    return expr;
  });
}
