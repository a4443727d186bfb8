import type { StoredPropertyFilter } from '@tributary/property-filters';

/** An action as the caller loads it for the project: PostHog's `Action` with its `ActionStepJSON` steps. */

export const STRING_MATCHINGS = ['exact', 'contains', 'regex'] as const;
export type StringMatching = (typeof STRING_MATCHINGS)[number];

export interface ActionStep {
  event?: string | null;
  url?: string | null;
  url_matching?: StringMatching | null;
  selector?: string | null;
  tag_name?: string | null;
  text?: string | null;
  text_matching?: StringMatching | null;
  href?: string | null;
  href_matching?: StringMatching | null;
  properties?: StoredPropertyFilter[] | null;
}

export interface ActionDefinition {
  id: number;
  name: string;
  steps: readonly ActionStep[];
}
