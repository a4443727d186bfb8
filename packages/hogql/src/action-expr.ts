import { PropertyFilterError, type StoredPropertyFilter } from '@tributary/property-filters';
import type { Call, Expr, SelectLike } from './ast.js';
import { queryError } from './errors.js';
import type { ActionDefinition, ActionStep, StringMatching } from './action-definition.js';
import { propertyFilterExprs, type FilterContext } from './property-filter-expr.js';

/**
 * Actions (PostHog's `Action` with its `ActionStepJSON` steps) as ordinary HogQL over `events`, as
 * PostHog's `action_to_expr` builds them: an action is the OR of its steps, a step the AND of its
 * conditions. The conditions are trees like any query's, so the printer guards what they read
 * (a cohort a step's properties name) as it guards everything else.
 */

/** PostHog tests the clicked element only on autocaptured events. */
const AUTOCAPTURE = '$autocapture';

const field = (...chain: string[]): Expr => ({ node: 'Field', chain });
const constant = (value: string): Expr => ({ node: 'Constant', value });
const call = (name: string, ...args: Expr[]): Expr => ({ node: 'Call', name, args });
const compare = (op: string, left: Expr, right: Expr): Expr => ({ node: 'CompareOperation', op, left, right });
const TRUE: Expr = { node: 'Constant', value: true };

const escapeRegex = (value: string): string => value.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** `$current_url` as PostHog's steps test it: equal, `like %url%` (so `%` and `_` are wildcards, as there), or a regular expression. */
function urlExpr(url: string, matching: StringMatching | null | undefined): Expr {
  const current = field('properties', '$current_url');
  if (matching === 'exact') return compare('==', current, constant(url));
  if (matching === 'regex') return call('match', current, constant(url));
  return compare('like', current, constant(`%${url}%`));
}

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

/** An element filter (`text`, `href`), as the property filters test one, with the step's matching. */
function elementFilter(key: 'text' | 'href', value: string, matching: StringMatching | null | undefined): StoredPropertyFilter {
  const operator = matching === 'regex' ? 'regex' : matching === 'contains' ? 'icontains' : 'exact';
  return { key, value, operator, type: 'element' };
}

function stepExpr(step: ActionStep, context: FilterContext, at: string): Expr {
  const exprs: Expr[] = [];
  const filters: StoredPropertyFilter[] = [];
  if (step.event) exprs.push(compare('==', field('event'), constant(step.event)));
  if (step.event === AUTOCAPTURE) {
    if (step.selector) exprs.push(call('match', field('elements_chain'), constant(selectorRegex(step.selector))));
    if (step.tag_name) exprs.push(call('match', field('elements_chain'), constant(`(?:^|;)${escapeRegex(step.tag_name)}(?:\\.|$|;|:)`)));
    if (step.href != null) filters.push(elementFilter('href', step.href, step.href_matching));
    if (step.text != null) filters.push(elementFilter('text', step.text, step.text_matching));
  }
  if (step.url) exprs.push(urlExpr(step.url, step.url_matching));
  filters.push(...(step.properties ?? []));
  exprs.push(...propertyFilterExprs(filters, context, `${at}.properties`));
  if (exprs.length === 0) return TRUE;
  return exprs.length === 1 ? exprs[0]! : { node: 'And', exprs };
}

/** Whether an event is the action: any of its steps (every event, for an action without steps, as PostHog's). */
export function actionExpr(action: ActionDefinition, context: FilterContext): Expr {
  const steps = action.steps.map((step, i) => stepExpr(step, context, `steps[${i}]`));
  if (steps.length === 0) return TRUE;
  return steps.length === 1 ? steps[0]! : { node: 'Or', exprs: steps };
}

/** The action an `ActionsNode` or `matchesAction` names, looked up among those the caller loaded for the project. */
export function projectAction(context: FilterContext, id: number): ActionDefinition {
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
  const expand = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(expand);
    if (value === null || typeof value !== 'object') return value;
    const node = value as Record<string, unknown>;
    if (isMatchesAction(node)) {
      const arg = node.args[0];
      if (node.args.length !== 1 || arg?.node !== 'Constant' || (typeof arg.value !== 'string' && typeof arg.value !== 'number')) {
        throw queryError('matchesAction takes one argument: the name (or id) of one of the project\'s actions');
      }
      const expr = actions.get(arg.value);
      if (!expr) throw queryError(`matchesAction: the project has no action ${JSON.stringify(arg.value)}`);
      return expr;
    }
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, expand(child)]));
  };
  return expand(query) as T;
}
