import { badRequest } from '@tributary/http';
import { personDisplayName } from '@tributary/persons';
import type { PersonRecord } from './management-person-store.js';

/**
 * Postgres reads a regex filter in its own dialect (repeat counts only up to 255, `{2}` alone is
 * an error): a pattern it cannot compile is the filter's fault, not a server error.
 */
export async function regexOfFilters<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error as { code?: unknown }).code === '2201B') throw badRequest('properties: a regular expression uses syntax Postgres cannot compile.', 'properties', 'invalid_query');
    throw error;
  }
}

/** The columns of a CSV of persons. */
export const PERSON_FIELDS = ['id', 'name', 'distinct_ids', 'properties', 'created_at', 'uuid'] as const;

/** A person as the persons endpoint shows one, and the lists of persons elsewhere (a cohort's) too. */
export function presentPerson(person: PersonRecord) {
  return {
    id: person.id,
    name: personDisplayName(person.properties, person.distinct_ids),
    distinct_ids: person.distinct_ids,
    properties: person.properties,
    created_at: person.created_at.toISOString(),
    uuid: person.uuid,
  };
}
