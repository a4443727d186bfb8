import { randomBytes } from 'node:crypto';
import { validateFlagDefinition } from '@tributary/flags';
import { badRequest } from '@tributary/http';
import type { SurveyConditions } from './survey-requests.js';

/** PostHog's prefix for the flags a survey makes; posthog-js sends no `$feature_flag_called` for them. */
export const SURVEY_FLAG_PREFIX = 'survey-targeting-';

/** A flag the survey made (and so changes and deletes), as opposed to one the user chose. */
export const isSurveyFlag = (key: string) => key.startsWith(SURVEY_FLAG_PREFIX);

/** PostHog's keys: the prefix, ten random hex digits, and `-custom` for the internal flag. */
export const surveyFlagKey = (suffix = '') => `${SURVEY_FLAG_PREFIX}${randomBytes(5).toString('hex')}${suffix}`;

/** PostHog's rule: a survey is shown from its start date until it is given an end date. */
export const isRunning = (survey: { start_date: string | null; end_date: string | null; archived: boolean }) =>
  survey.start_date !== null && survey.end_date === null && !survey.archived;

const notSet = (key: string) => ({ key, type: 'person', operator: 'is_not_set', value: 'is_not_set' });

/**
 * The internal targeting flag's filters, as PostHog makes them: posthog-js sets
 * `$survey_dismissed/<id>` or `$survey_responded/<id>` on the person, so whoever dismissed or
 * answered is not asked again, here and on their other devices. With a wait period, nobody is
 * asked within that many days of seeing any survey.
 */
export function internalTargetingFilters(surveyId: string, conditions: SurveyConditions | null): Record<string, unknown> {
  const answered = [notSet(`$survey_dismissed/${surveyId}`), notSet(`$survey_responded/${surveyId}`)];
  const wait = conditions?.seenSurveyWaitPeriodInDays;
  if (!wait) return { groups: [{ properties: answered, rollout_percentage: 100 }] };
  return {
    groups: [
      { properties: [...answered, notSet('$survey_last_seen_date')], rollout_percentage: 100 },
      { properties: [...answered, { key: '$survey_last_seen_date', type: 'person', operator: 'is_date_before', value: `-${wait}d` }], rollout_percentage: 100 },
    ],
  };
}

/** `targeting_flag_filters` as a flag definition; one that lets everyone through is refused, as PostHog does. */
export function checkTargetingFilters(filters: Record<string, unknown>): void {
  const problem = validateFlagDefinition({ filters })[0];
  if (problem) throw badRequest(problem.detail, `targeting_flag_${problem.attr}`);
  const groups = (filters.groups ?? []) as { properties?: unknown[]; rollout_percentage?: number | null }[];
  if (groups.some((g) => (g.rollout_percentage ?? 100) === 100 && !g.properties?.length)) {
    throw badRequest('targeting_flag_filters target everyone: to show the survey to everyone, leave the targeting out.', 'targeting_flag_filters');
  }
}
