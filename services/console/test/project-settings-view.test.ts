import type { Project } from '../src/api-client.js';
import { draftOf, patchBody, retentionText, settingsErrors, type SettingsDraft } from '../src/project-settings-view.js';

const draft = (overrides: Partial<SettingsDraft>): SettingsDraft => ({ name: 'Shop', timezone: 'Europe/Berlin', keepForever: false, retentionDays: '30', ...overrides });

describe("a project's settings are checked with the API's bounds before it is called", () => {
  it('asks for a whole number of days from 1 to 36500 unless events are kept forever', () => {
    for (const retentionDays of ['0', '36501', '1.5', '-3', 'x', '']) {
      expect(settingsErrors(draft({ retentionDays }))).toEqual({ retention_days: 'Days must be a whole number from 1 to 36500.' });
    }
    expect(settingsErrors(draft({ retentionDays: '1' }))).toEqual({});
    expect(settingsErrors(draft({ retentionDays: ' 36500 ' }))).toEqual({});
    expect(settingsErrors(draft({ keepForever: true, retentionDays: '0' }))).toEqual({});
  });

  it('asks for a name of at most 200 characters and a timezone of at most 64', () => {
    expect(settingsErrors(draft({ name: ' ', timezone: '' }))).toEqual({ name: 'Name is required.', timezone: 'Timezone is required.' });
    expect(settingsErrors(draft({ name: 'n'.repeat(201), timezone: 't'.repeat(65) }))).toEqual({ name: 'Name must be at most 200 characters.', timezone: 'Timezone must be at most 64 characters.' });
    expect(settingsErrors(draft({ name: 'n'.repeat(200), timezone: 't'.repeat(64) }))).toEqual({});
  });

  it('sends the days as a number, or null to keep events forever', () => {
    expect(patchBody(draft({ name: ' Shop ', timezone: ' UTC ', retentionDays: ' 30 ' }))).toEqual({ name: 'Shop', timezone: 'UTC', event_retention_days: 30 });
    expect(patchBody(draft({ keepForever: true, retentionDays: '30' }))).toEqual({ name: 'Shop', timezone: 'Europe/Berlin', event_retention_days: null });
  });

  it("starts from the project's settings as the API answers them", () => {
    const project: Project = { id: 1, name: 'Shop', api_token: 'phc_x', timezone: 'UTC', event_retention_days: null };
    expect(draftOf(project)).toEqual({ name: 'Shop', timezone: 'UTC', keepForever: true, retentionDays: '' });
    expect(draftOf({ ...project, event_retention_days: 90 })).toEqual({ name: 'Shop', timezone: 'UTC', keepForever: false, retentionDays: '90' });
  });
});

describe('what the page shows', () => {
  it('a retention in days, or that events are kept forever', () => {
    expect([retentionText(null), retentionText(1), retentionText(30)]).toEqual(['Kept forever', '1 day', '30 days']);
  });
});
