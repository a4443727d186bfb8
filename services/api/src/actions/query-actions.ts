import { actionExpr, idsIn, type ActionDefinition, type Expr, type FilterContext } from '@tributary/hogql';
import type { ActionStore } from './action-store.js';

const isActionId = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 2_147_483_647;

/**
 * The actions a request's insight names, wherever they stand: an `ActionsNode` (a series, a
 * funnel step) or a retention entity of `type: 'actions'`. Well-formed ids only, since they are
 * looked up in Postgres; any other value is refused when the query is built.
 */
export function actionIdsIn(request: unknown): number[] {
  return idsIn(request, (node) => {
    if (node.kind !== 'ActionsNode' && node.type !== 'actions') return null;
    const id = typeof node.id === 'string' && /^\d+$/.test(node.id) ? Number(node.id) : node.id;
    return isActionId(id) ? id : null;
  });
}

/** The project's live actions a query names by id or (matchesAction) by name; another project's are never found. */
export async function projectActions(store: Pick<ActionStore, 'definitions'>, teamId: number, ids: readonly number[], names: readonly string[] = []): Promise<ActionDefinition[]> {
  return store.definitions(teamId, ids.filter(isActionId), names);
}

/** What `matchesAction(...)` may name, by name and by id, each as the action's condition for the printer. */
export function matchesActionConditions(actions: readonly ActionDefinition[], filters: FilterContext): Map<string | number, Expr> {
  const conditions = new Map<string | number, Expr>();
  for (const action of actions) {
    const condition = actionExpr(action, filters);
    conditions.set(action.name, condition);
    conditions.set(action.id, condition);
  }
  return conditions;
}
