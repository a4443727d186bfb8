import { SQUASH_STATEMENT_BYTES, squashChunks, type MovedDistinctId } from './override-squash.js';

const move = (team_id: number, distinct_id: string): MovedDistinctId => ({ team_id, distinct_id, person_id: '00000000-0000-0000-0000-000000000001', version: 1 });

describe('squashChunks', () => {
  it('keeps each mutation to one project', () => {
    const chunks = squashChunks([move(1, 'a'), move(1, 'b'), move(2, 'a')], SQUASH_STATEMENT_BYTES.single);
    expect(chunks.map((c) => c.map((m) => `${m.team_id}:${m.distinct_id}`))).toEqual([['1:a', '1:b'], ['2:a']]);
  });

  it("fills a statement to its byte budget, counting each id's name at its escaped worst twice", () => {
    // 2 x (2 x 10 + 4) + 40 = 88 bytes an id: three fit in 300, the fourth starts the next statement.
    const ids = ['0123456789', '1123456789', '2123456789', '3123456789', '4123456789'].map((id) => move(1, id));
    expect(squashChunks(ids, 300).map((c) => c.length)).toEqual([3, 2]);
  });

  it('takes an id longer than the budget alone rather than never', () => {
    expect(squashChunks([move(1, 'x'.repeat(1_000)), move(1, 'y')], 300).map((c) => c.length)).toEqual([1, 1]);
  });

  it('lists many thousands of ordinary ids in one statement on a single server, fewer in a cluster', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => move(7, `user-${i}@example.com-${'x'.repeat(20)}`));
    expect(squashChunks(ids, SQUASH_STATEMENT_BYTES.single)).toHaveLength(1);
    expect(squashChunks(ids, SQUASH_STATEMENT_BYTES.cluster).length).toBeGreaterThan(1);
  });
});
