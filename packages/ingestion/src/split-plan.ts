import { v5 as uuidv5 } from 'uuid';

const SPLIT_NAMESPACE = '9ad1a3a0-3b43-4b8f-9c2f-6e2f2c1b5a77';

/** The uuid of the new person a split gives a distinct id: derived, so a retried split creates the same one. */
export function splitPersonUuid(teamId: number, distinctId: string): string {
  return uuidv5(`${teamId}:${distinctId}:split`, SPLIT_NAMESPACE);
}

/** Which distinct id stays on the person (the first, or `main_distinct_id` if it is one of them), and which leave. */
export function planSplit(distinctIds: readonly string[], mainDistinctId?: string): { keep: string; split: string[] } | null {
  if (distinctIds.length === 0) return null;
  const keep = mainDistinctId !== undefined && distinctIds.includes(mainDistinctId) ? mainDistinctId : distinctIds[0]!;
  return { keep, split: distinctIds.filter((id) => id !== keep) };
}
