import { badRequest } from '@tributary/http';

export interface PersonPropertyFilter {
  key: string;
  value?: unknown;
  operator?: string;
  type?: string;
}

/** A WHERE fragment over `p.properties` with its parameters, numbered from `firstParam`. */
export interface PgCondition {
  text: string;
  params: unknown[];
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
const isNumeric = (value: unknown) => typeof value === 'number' || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)));
const likeEscape = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Person-property filters as Postgres conditions, with the same semantics as flag matching:
 * string comparisons ignore case, a list value means "any of", numbers compare as numbers, and a
 * missing property matches only the negative operators.
 */
export function personPropertyConditions(filters: readonly PersonPropertyFilter[], firstParam: number): PgCondition {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${firstParam + params.length - 1}`;
  };
  const parts = filters.map((filter, i) => {
    if (filter.type !== undefined && filter.type !== 'person') {
      throw badRequest(`properties[${i}].type must be "person": persons are filtered on their own properties.`, 'properties');
    }
    const operator = filter.operator ?? 'exact';
    const key = param(filter.key);
    const text = `(p.properties ->> ${key})`;
    const present = `(p.properties ? ${key})`;
    if (operator === 'is_set') return present;
    if (operator === 'is_not_set') return `NOT ${present}`;
    if (filter.value === undefined || filter.value === null) throw badRequest(`properties[${i}].value is required for operator "${operator}".`, 'properties');
    const values = (Array.isArray(filter.value) ? filter.value : [filter.value]).map((v) => asText(v).toLowerCase());
    switch (operator) {
      case 'exact':
        return `lower(${text}) = ANY(${param(values)}::text[])`;
      case 'is_not':
        return `(NOT ${present} OR NOT lower(${text}) = ANY(${param(values)}::text[]))`;
      case 'icontains':
        return `${text} ILIKE ${param(`%${likeEscape(asText(filter.value))}%`)}`;
      case 'not_icontains':
        return `(NOT ${present} OR ${text} NOT ILIKE ${param(`%${likeEscape(asText(filter.value))}%`)})`;
      case 'regex':
      case 'not_regex': {
        const pattern = asText(filter.value);
        try {
          new RegExp(pattern);
        } catch {
          throw badRequest(`properties[${i}].value is not a valid regular expression.`, 'properties');
        }
        return operator === 'regex' ? `${text} ~ ${param(pattern)}` : `(NOT ${present} OR ${text} !~ ${param(pattern)})`;
      }
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        const sign = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
        if (isNumeric(filter.value)) {
          // CASE, not AND: Postgres may evaluate either side of an AND first, and the cast must only see numbers.
          return `CASE WHEN ${text} ~ '^\\s*-?[0-9]+(\\.[0-9]+)?\\s*$' THEN ${text}::numeric ${sign} ${param(String(filter.value))}::numeric ELSE false END`;
        }
        return `${text} ${sign} ${param(asText(filter.value))}`;
      }
      default:
        throw badRequest(
          `properties[${i}].operator "${operator}" is not supported for persons (exact, is_not, icontains, not_icontains, regex, not_regex, gt, gte, lt, lte, is_set, is_not_set).`,
          'properties',
        );
    }
  });
  return { text: parts.length === 0 ? 'TRUE' : parts.map((p) => `(${p})`).join(' AND '), params };
}
