import { loadConfig } from '@tributary/config';
import { queryClickHouseSettings } from '../src/query/query-settings.js';

/**
 * 18.16 pauses a statement of a lower `priority` for up to a second at every block it reads while
 * any higher one runs; with ingest always inserting, a tenant's query waited minutes. None asks for one.
 */
describe("the query endpoint's statements run at ClickHouse's one priority", () => {
  const config = loadConfig({}, {}, 'api');

  it.each([
    ['with the default limits', queryClickHouseSettings(config)],
    ['with a thread limit', queryClickHouseSettings({ ...config, queryMaxThreads: 2 })],
  ])('%s: no priority, and read-only', (_, settings) => {
    expect(settings).not.toHaveProperty('priority');
    expect(settings).toHaveProperty('readonly', 2);
  });
});
