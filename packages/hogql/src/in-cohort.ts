import type { CompareOperation, SelectLike, SelectQuery } from './ast.js';
import { queryError, spanOf } from './errors.js';
import { replaceNodes } from './replace-nodes.js';

/**
 * HogQL's `x IN COHORT 'name'` and `x IN COHORT 5` (and `NOT IN COHORT`), as PostHog writes them:
 * the cohort, by name or id, stands for the statement listing its persons' ids, which the caller
 * builds from the project's own cohorts (`cohortPersonIdsQuery`); the printer guards it like the
 * rest of the query. A cohort the project does not have is refused by name.
 */

const OPS: Record<string, string> = { 'in cohort': 'in', 'not in cohort': 'not in' };

const isInCohort = (node: Record<string, unknown>): node is CompareOperation & Record<string, unknown> => node.node === 'CompareOperation' && typeof node.op === 'string' && Object.hasOwn(OPS, node.op.toLowerCase());

/** The cohort a `IN COHORT` names, or a refusal: a name or an id, written as a constant. */
function cohortRef(node: CompareOperation): string | number {
  const right = node.right;
  if (right.node !== 'Constant' || (typeof right.value !== 'string' && typeof right.value !== 'number')) throw queryError('IN COHORT takes the name or id of one of the project\'s cohorts', spanOf(node));
  return right.value;
}

/** What a query's `IN COHORT`s name (a cohort's name, or its id), so the caller can look them up in the project. */
export function inCohortRefs(query: SelectLike): (string | number)[] {
  const refs = new Set<string | number>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const node = value as Record<string, unknown>;
    if (isInCohort(node)) refs.add(cohortRef(node));
    Object.values(node).forEach(visit);
  };
  visit(query);
  return [...refs];
}

/** The query with each `IN COHORT` replaced by `IN (the cohort's persons' ids)`, before it is resolved. */
export function expandInCohort<T extends SelectLike>(query: T, cohorts: ReadonlyMap<string | number, SelectQuery>): T {
  const expand = <U>(tree: U): U =>
    replaceNodes(tree, (node) => {
      if (!isInCohort(node)) return undefined;
      const ref = cohortRef(node);
      const persons = cohorts.get(ref);
      if (!persons) throw queryError(`cohort ${JSON.stringify(ref)} does not exist in this project`, spanOf(node));
      return { node: 'CompareOperation', op: OPS[node.op.toLowerCase()], left: expand(node.left), right: persons, start: node.start, end: node.end };
    });
  return expand(query);
}
