import type { ClickHouse } from '@tributary/clickhouse';
import { RowBuffer } from './clickhouse-rows.js';
import { writeRows } from './clickhouse-writer.js';

describe('writeRows', () => {
  it('passes on a failed insert only once the inserts beside it have ended, as the rows are then written again and freed', async () => {
    const ended: string[] = [];
    const clickhouse = {
      insertEncoded: async (table: string) => {
        if (table === 'person') throw new Error('person refused');
        await new Promise((resolve) => setTimeout(resolve, 50));
        ended.push(table);
      },
    } as unknown as ClickHouse;
    await expect(writeRows(clickhouse, new RowBuffer())).rejects.toThrow('person refused');
    expect(ended.sort()).toEqual(['groups', 'ingestion_warnings', 'person_distinct_id']);
  });
});
