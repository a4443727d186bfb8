import type { CompareOperation, Expr, Field } from './ast.js';
import { printsAsSet } from './in-set.js';

/**
 * Which WHERE conditions on an event's person can be read as a set of distinct ids (`distinct_id
 * IN (the ids whose person meets it)`) instead of through the lazy person join. The two agree on
 * every event with a person; an event without one (a distinct id with no identity row, or whose
 * person is deleted) reads every person property as NULL in the join, and is in no set. So the
 * set form is taken only for a condition that reads nothing but person properties and that
 * cannot hold when all of them are NULL, as ClickHouse evaluates it.
 */

/**
 * A condition's value where every person property it reads is NULL: `null`, `false` or `true`;
 * `notTrue` (NULL or false); `value` (some value that is not NULL); `unknown`.
 */
type Outcome = 'null' | 'false' | 'true' | 'notTrue' | 'value' | 'unknown';

const NOT_TRUE = new Set<Outcome>(['null', 'false', 'notTrue']);

/**
 * Functions that give NULL for a NULL argument as printed (ClickHouse's default for Nullable
 * arguments, and the rewrites `toInt`, `toFloat` and `concat` keep it). Not `if`, `multiIf`,
 * `coalesce`, `ifNull`, `isNull`, `has`, `and`, `or` and the like, which give values for NULL.
 */
const NULL_IN_NULL_OUT = new Set(
  [
  'length', 'lengthUTF8', 'empty', 'notEmpty', 'lower', 'upper', 'lowerUTF8', 'upperUTF8', 'reverse', 'concat', 'substring', 'substringUTF8',
  'startsWith', 'endsWith', 'position', 'positionCaseInsensitive', 'replaceAll', 'replaceOne', 'replaceRegexpAll', 'replaceRegexpOne', 'match',
  'extract', 'like', 'notLike', 'toString', 'toInt', 'toFloat', 'toInt64OrNull', 'toFloat64OrNull', 'equals', 'notEquals', 'less', 'greater',
  'lessOrEquals', 'greaterOrEquals',
  ].map((name) => name.toLowerCase()),
);

/** Comparisons printed as one ClickHouse comparison or pattern match of the two sides, NULL for a NULL side. */
const NULL_COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=', 'like', 'not like', 'ilike', 'not ilike', '=~', '!~', '=~*', '!~*']);

function constantOutcome(value: unknown): Outcome {
  if (value === null || value === undefined) return 'null';
  if (value === false || value === 0) return 'false';
  if (value === true || value === 1) return 'true';
  return 'value';
}

function and(outcomes: Outcome[]): Outcome {
  if (outcomes.includes('false')) return 'false';
  if (outcomes.every((o) => o === 'null')) return 'null';
  if (outcomes.some((o) => NOT_TRUE.has(o))) return 'notTrue';
  return outcomes.every((o) => o === 'true') ? 'true' : 'unknown';
}

function or(outcomes: Outcome[]): Outcome {
  if (outcomes.includes('true')) return 'true';
  if (outcomes.every((o) => o === 'false')) return 'false';
  if (outcomes.every((o) => o === 'null' || o === 'false')) return 'null';
  return outcomes.every((o) => NOT_TRUE.has(o)) ? 'notTrue' : 'unknown';
}

function not(outcome: Outcome): Outcome {
  if (outcome === 'null') return 'null';
  if (outcome === 'true') return 'false';
  if (outcome === 'false') return 'true';
  return 'unknown';
}

/** Any side NULL makes the whole NULL; otherwise nothing is known of the result. */
const nullIfAny = (outcomes: Outcome[]): Outcome => (outcomes.includes('null') ? 'null' : 'unknown');

/**
 * Reads a condition: `readsPerson` tells the fields that are person properties (NULL here); any
 * other field means the condition is not the person's alone, and gives `undefined`.
 */
class NullPersonReader {
  personReads = 0;

  constructor(private readonly readsPerson: (field: Field) => boolean) {}

  outcome(node: Expr): Outcome | undefined {
    switch (node.node) {
      case 'Constant':
        return constantOutcome(node.value);
      case 'Placeholder':
        return 'unknown';
      case 'Field':
        if (!this.readsPerson(node)) return undefined;
        this.personReads++;
        return 'null';
      case 'And':
      case 'Or': {
        const parts = this.all(node.exprs);
        return parts && (node.node === 'And' ? and(parts) : or(parts));
      }
      case 'Not': {
        const inner = this.outcome(node.expr);
        return inner && not(inner);
      }
      case 'CompareOperation':
        return this.compare(node);
      case 'ArithmeticOperation': {
        const parts = this.all([node.left, node.right]);
        return parts && nullIfAny(parts);
      }
      case 'Call': {
        if (node.params?.length || node.distinct) return undefined;
        const parts = this.all(node.args);
        if (!parts) return undefined;
        // Function names are read without regard to case, as the printer looks them up; `NOT (x)` parses as one.
        const name = node.name.toLowerCase();
        if (NULL_IN_NULL_OUT.has(name)) return nullIfAny(parts);
        if (name === 'not' && parts.length === 1) return not(parts[0]!);
        if (name === 'ifnull' || name === 'coalesce') {
          // The first argument that is not NULL is the value; one that may be NULL leaves it open.
          const first = parts.find((o) => o !== 'null');
          return first === undefined ? 'null' : first === 'notTrue' ? 'unknown' : first;
        }
        return 'unknown';
      }
      default:
        return undefined;
    }
  }

  private all(nodes: Expr[]): Outcome[] | undefined {
    const outcomes: Outcome[] = [];
    for (const node of nodes) {
      const outcome = this.outcome(node);
      if (outcome === undefined) return undefined;
      outcomes.push(outcome);
    }
    return outcomes;
  }

  private compare(node: CompareOperation): Outcome | undefined {
    const op = node.op.toLowerCase();
    const left = this.outcome(node.left);
    if (left === undefined) return undefined;
    if (op === 'in' || op === 'not in') {
      // Only a set, not has() over an array: NULL IN or NOT IN a set is NULL (the printer makes 18.16 answer so too).
      if (!printsAsSet(node.right)) return undefined;
      return left === 'null' ? 'null' : 'unknown';
    }
    const right = this.outcome(node.right);
    if (right === undefined || !NULL_COMPARISONS.has(op)) return undefined;
    // `x == NULL` and `x != NULL` are printed as isNull and isNotNull (the printer's `compare`).
    if (node.right.node === 'Constant' && node.right.value === null && (op === '==' || op === '!=')) {
      if (left === 'null') return op === '==' ? 'true' : 'false';
      return left === 'value' || left === 'true' || left === 'false' ? (op === '==' ? 'false' : 'true') : 'unknown';
    }
    return nullIfAny([left, right]);
  }
}

/**
 * Whether `condition` reads person properties (the fields `readsPerson` holds for) and nothing
 * else, and cannot hold for an event without a person.
 */
export function isPersonSetCondition(condition: Expr, readsPerson: (field: Field) => boolean): boolean {
  const reader = new NullPersonReader(readsPerson);
  const outcome = reader.outcome(condition);
  return outcome !== undefined && reader.personReads > 0 && NOT_TRUE.has(outcome);
}
