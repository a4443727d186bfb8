export interface IdListProblem {
  problem: string;
}

const isScalar = (value: unknown): value is string | number => typeof value === 'string' || typeof value === 'number';

/**
 * A list parameter as clients send it: a JSON array in the body, or in a query string a JSON
 * array (`ids=[1,2]`), a comma-separated list (`ids=1,2`) or the parameter repeated.
 */
export function parseIdList(raw: unknown): string[] | IdListProblem {
  if (raw === undefined || raw === null || raw === '') return [];
  if (Array.isArray(raw)) {
    if (raw.length === 1 && typeof raw[0] === 'string' && raw[0].trim().startsWith('[')) return parseIdList(raw[0]);
    if (!raw.every(isScalar)) return { problem: 'must be a list of strings or numbers' };
    return raw.map(String);
  }
  if (typeof raw === 'number') return [String(raw)];
  if (typeof raw !== 'string') return { problem: 'must be a list' };
  const text = raw.trim();
  if (text.startsWith('{')) return { problem: 'must be a list' };
  if (text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { problem: 'is not a valid JSON list' };
    }
    return Array.isArray(parsed) ? parseIdList(parsed) : { problem: 'must be a list' };
  }
  return text.split(',').map((part) => part.trim()).filter((part) => part !== '');
}
