import { loadConfig } from '@tributary/config';
import { calculationSettings } from '../src/cohort-calculation/cohort-members-reader.js';
import { EXPORT_READ_SETTINGS } from '../src/batch-exports/window-reader.js';

/**
 * 18.16 pauses a statement of a lower `priority` for up to a second at every block it reads while
 * any higher one runs; with ingest always inserting, a cohort or an export waited minutes. None asks for one.
 */
describe("the worker's readers of tenant data run at ClickHouse's one priority", () => {
  it.each([
    ['cohort calculation', calculationSettings(loadConfig())],
    ['batch exports', EXPORT_READ_SETTINGS],
  ])('%s: no priority, and read-only', (_, settings) => {
    expect(settings).not.toHaveProperty('priority');
    expect(settings).toHaveProperty('readonly', 2);
  });
});
