import { deletionCondition, nextDeletionRun, type DeletionRequest } from './index.js';

describe('deletion batch', () => {
  const request = (id: number, team: number, ids: string[]): DeletionRequest => ({
    id,
    team_id: team,
    person_uuid: `00000000-0000-0000-0000-00000000000${id}`,
    distinct_ids: ids,
    created_at: new Date(),
    done_at: null,
  });

  it('covers every request in one condition, each scoped to its project', () => {
    expect(deletionCondition([request(1, 7, ['a', 'b']), request(2, 8, [])]).text).toBe(
      "((team_id = 7) AND ((toString(person_id) = '00000000-0000-0000-0000-000000000001' OR distinct_id IN ('a', 'b')))) OR " +
        "((team_id = 8) AND ((toString(person_id) = '00000000-0000-0000-0000-000000000002' OR 0)))",
    );
  });

  it('next run is the coming Sunday at 05:00 UTC', () => {
    expect(nextDeletionRun(new Date('2026-11-22T16:00:00Z')).toISOString()).toBe('2026-11-29T05:00:00.000Z');
    expect(nextDeletionRun(new Date('2026-11-22T04:59:59Z')).toISOString()).toBe('2026-11-22T05:00:00.000Z');
    expect(nextDeletionRun(new Date('2026-11-25T10:00:00Z')).toISOString()).toBe('2026-11-29T05:00:00.000Z');
    expect(nextDeletionRun(new Date('2026-11-22T05:00:00Z')).toISOString()).toBe('2026-11-29T05:00:00.000Z');
  });
});
