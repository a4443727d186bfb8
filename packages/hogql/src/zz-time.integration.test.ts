import { Sql, createClickHouse } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { loadHogQLParser, parseSelect, printQuery } from './index.js';
it('times', async () => {
  await loadHogQLParser();
  const ch = createClickHouse(testConfig());
  for (const q of ['SELECT count() FROM sessions', 'SELECT $channel_type, count() FROM sessions GROUP BY $channel_type', 'SELECT count() FROM events']) {
    const sql = printQuery(await parseSelect(q), { teamId: 5 }).clickhouse;
    for (let i = 0; i < 3; i++) { const t = performance.now(); await ch.queryCompact(Sql.trusted(sql)); console.log(q, performance.now() - t); }
  }
  await ch.close();
});
