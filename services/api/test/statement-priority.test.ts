import { loadConfig } from '@tributary/config';
import { queryClickHouseSettings } from '../src/query/query-settings.js';
import { calculationSettings } from '../../worker/src/cohort-calculation/cohort-members-reader.js';
import { EXPORT_READ_SETTINGS } from '../../worker/src/batch-exports/window-reader.js';

/**
 * 18.16 pauses a statement of a lower `priority` for up to a second at every block it reads while
 * any higher one runs; with ingest always inserting, a tenant's query, a cohort or an export waited
 * minutes (a CI run's isolation suite took 867 s where it takes 21). None of them asks for one.
 */
describe('the readers of tenant SQL run at ClickHouse\'s one priority', () => {
  const config = loadConfig({}, {}, 'api');

  it.each([
    ['the query endpoint', queryClickHouseSettings(config)],
    ['the query endpoint with a thread limit', queryClickHouseSettings({ ...config, queryMaxThreads: 2 })],
    ['cohort calculation', calculationSettings({ ...config, cohortCalculationMaxExecutionTimeS: 60 })],
    ['batch exports', EXPORT_READ_SETTINGS],
  ])('%s sends no priority, and stays read-only', (_, settings) => {
    expect(settings).not.toHaveProperty('priority');
    expect(settings).toHaveProperty('readonly', 2);
  });
});
