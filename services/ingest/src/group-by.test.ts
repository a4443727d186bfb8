import { groupBy } from './group-by.js';

describe('groupBy', () => {
  it('keeps the order of the items within a group and of the groups by first appearance', () => {
    const rows = [
      { team: 2, id: 'a' },
      { team: 1, id: 'b' },
      { team: 2, id: 'c' },
    ];
    expect([...groupBy(rows, (r) => r.team, (r) => r.id)]).toEqual([
      [2, ['a', 'c']],
      [1, ['b']],
    ]);
  });
});
