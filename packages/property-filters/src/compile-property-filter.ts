import { asList, compare, lower, matchProperty, NEGATIVE, safeRegex } from './match-property.js';
import type { StoredPropertyFilter, ValueOperator } from './property-filter.js';

/** What a compiled filter does with a property that is present; the rest defer to `matchProperty`. */
const IS_SET = 0;
const NEVER = 1;
const EXACT = 2;
const IS_NOT = 3;
const ICONTAINS = 4;
const NOT_ICONTAINS = 5;
const REGEX = 6;
const NOT_REGEX = 7;
const GT = 8;
const GTE = 9;
const LT = 10;
const LTE = 11;
const REFERENCE = 12;

// A map, not an object: a stored operator may be any string, `constructor` included.
const KINDS: ReadonlyMap<string, number> = new Map<ValueOperator, number>([
  ['exact', EXACT], ['is_not', IS_NOT], ['icontains', ICONTAINS], ['not_icontains', NOT_ICONTAINS], ['regex', REGEX], ['not_regex', NOT_REGEX],
  ['gt', GT], ['gte', GTE], ['lt', LT], ['lte', LTE], ['is_set', IS_SET], ['is_not_set', NEVER],
]);

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * One property filter with the work that depends only on the filter done once: the operator
 * resolved, the value lowercased, the pattern compiled. It answers
 * exactly as `matchProperty` does on the same filter, which it falls back to for what depends on
 * the clock (dates) and for values it cannot prepare. Filters stored in a flag are matched on
 * every request, so decide compiles each once per definition.
 */
export class CompiledPropertyFilter {
  private readonly key: string;
  /** The answer when the property is missing: only the negative operators match it. */
  private readonly whenMissing: boolean;
  private readonly kind: number;
  /** `exact`/`is_not`: the values lowercased; `icontains`/`not_icontains`: the one value lowercased. */
  private readonly texts: readonly string[] = [];
  private readonly regex: RegExp | null = null;
  /** The comparison operator, for `gt`/`gte`/`lt`/`lte`. */
  private readonly comparison: 'gt' | 'gte' | 'lt' | 'lte' = 'gt';

  constructor(private readonly filter: StoredPropertyFilter) {
    const operator = (filter.operator ?? 'exact') as ValueOperator;
    this.key = filter.key;
    this.whenMissing = operator !== 'is_set' && NEGATIVE.has(operator);
    const value = filter.value;
    let kind = KINDS.get(operator) ?? REFERENCE;
    // A filter stored before validation required a value may lack one: it matches nothing.
    if (kind !== IS_SET && (value === undefined || value === null)) kind = NEVER;
    try {
      if (kind === EXACT || kind === IS_NOT) this.texts = asList(value).map(lower);
      else if (kind === ICONTAINS || kind === NOT_ICONTAINS) this.texts = [lower(value)];
      else if (kind === REGEX || kind === NOT_REGEX) {
        this.regex = safeRegex(value);
        // An invalid pattern never matches, whichever way round.
        if (this.regex === null) kind = NEVER;
      } else if (kind >= GT && kind <= LTE) {
        this.comparison = operator as 'gt' | 'gte' | 'lt' | 'lte';
      }
    } catch {
      // A value no stored JSON holds (say, `[undefined]`): matchProperty gives its answer, or its error.
      kind = REFERENCE;
    }
    this.kind = kind;
  }

  matches(properties: Record<string, unknown>, now: Date): boolean {
    const key = this.key;
    if (!hasOwn.call(properties, key)) return this.whenMissing;
    const actual = properties[key];
    if (actual === undefined) return this.whenMissing;
    switch (this.kind) {
      case IS_SET:
        return true;
      case NEVER:
        return false;
      case EXACT:
        return this.anyEquals(actual);
      case IS_NOT:
        return !this.anyEquals(actual);
      case ICONTAINS:
        return lower(actual).includes(this.texts[0]!);
      case NOT_ICONTAINS:
        return !lower(actual).includes(this.texts[0]!);
      case REGEX:
        return this.regex!.test(String(actual));
      case NOT_REGEX:
        return !this.regex!.test(String(actual));
      case GT:
      case GTE:
      case LT:
      case LTE:
        return compare(actual, this.filter.value, this.comparison);
      default:
        return matchProperty(this.filter, properties, now);
    }
  }

  private anyEquals(actual: unknown): boolean {
    const texts = this.texts;
    // Like `some`, an empty list reads nothing of the property.
    if (texts.length === 0) return false;
    const text = lower(actual);
    for (let i = 0; i < texts.length; i++) if (texts[i] === text) return true;
    return false;
  }
}
