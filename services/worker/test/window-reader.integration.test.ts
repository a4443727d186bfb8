import { createTestTenant } from '@tributary/test-support';
import { clickhouse, config, pool } from './export-fixture.js';
import { windowReaderSuite } from './window-reader-suite.js';

afterAll(async () => {
  await pool.end();
  await clickhouse.close();
});

windowReaderSuite(() => ({ clickhouse, newTeamId: async () => (await createTestTenant(pool, config)).project.id }));
