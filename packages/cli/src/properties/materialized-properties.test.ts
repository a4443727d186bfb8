import type { MaterializedColumns } from '@tributary/clickhouse';
import { propertiesToMaterialize, propertyListing } from './materialized-properties.js';

const existing: MaterializedColumns = { properties: new Map([['$browser', 'mat__browser_x']]), person_properties: new Map() };
const counts = [
  { column: 'properties', key: '$current_url', reads: 5000 },
  { column: 'properties', key: '$browser', reads: 4000 },
  { column: 'person_properties', key: 'email', reads: 3000 },
  { column: 'not_a_column', key: 'x', reads: 2500 },
  { column: 'properties', key: '$os', reads: 2000 },
  { column: 'properties', key: 'rare', reads: 10 },
];

describe('auto-materialization picks the most read properties without a column', () => {
  it('the top N above the threshold, skipping those with a column and unknown JSON columns', () => {
    expect(propertiesToMaterialize(counts, existing, { topN: 2, minReads: 1000, maxColumns: 100 })).toEqual([
      { column: 'properties', key: '$current_url' },
      { column: 'person_properties', key: 'email' },
    ]);
    expect(propertiesToMaterialize(counts, existing, { topN: 10, minReads: 1000, maxColumns: 100 }).map((p) => p.key)).toEqual(['$current_url', 'email', '$os']);
  });

  it('no more than the room the column limit leaves', () => {
    expect(propertiesToMaterialize(counts, existing, { topN: 10, minReads: 1, maxColumns: 2 })).toEqual([{ column: 'properties', key: '$current_url' }]);
    expect(propertiesToMaterialize(counts, existing, { topN: 10, minReads: 1, maxColumns: 1 })).toEqual([]);
  });
});

describe('the listing shows every materialized property and the most read others', () => {
  it('with use counts, most read first, its column where it has one', () => {
    expect(propertyListing(counts, existing, 2)).toEqual([
      { column: 'properties', key: '$current_url', reads: 5000, materialized: null },
      { column: 'properties', key: '$browser', reads: 4000, materialized: 'mat__browser_x' },
      { column: 'person_properties', key: 'email', reads: 3000, materialized: null },
    ]);
  });

  it('a materialized property no query has read yet is listed with no reads', () => {
    expect(propertyListing([], existing, 10)).toEqual([{ column: 'properties', key: '$browser', reads: 0, materialized: 'mat__browser_x' }]);
  });
});
