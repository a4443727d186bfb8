import { ACTORS_PAGE, actorRows, actorsQueryOf } from '../src/actors-view.js';

const page = { kind: 'ActorsQuery', limit: ACTORS_PAGE, offset: 0 };

describe('a point of a drawn insight opens the ActorsQuery of the persons behind it', () => {
  it('a trend line point: its series, day, breakdown value and period', () => {
    const source = { kind: 'TrendsQuery' };
    const results = [
      { action: { order: 0 }, days: ['2024-01-01', '2024-01-02'], breakdown_value: 'Chrome', compare_label: 'current' },
      { action: { order: 1 }, days: ['2024-01-01', '2024-01-02'], breakdown_value: 'Safari', compare_label: 'previous' },
    ];
    expect(actorsQueryOf(source, results, 1, 0)).toEqual({ ...page, source: { kind: 'InsightActorsQuery', source, series: 1, day: '2024-01-01', breakdown: 'Safari', compare: 'previous' } });
  });

  it('a total-value bar or table row has no day; a formula line has no persons of its own', () => {
    const source = { kind: 'TrendsQuery', trendsFilter: { display: 'ActionsTable' } };
    expect(actorsQueryOf(source, [{ action: { order: 0 } }, { action: { order: 1 } }], 0, 1)).toEqual({ ...page, source: { kind: 'InsightActorsQuery', source, series: 1 } });
    expect(actorsQueryOf({ kind: 'TrendsQuery', trendsFilter: { formula: 'A/B' } }, [{ days: ['2024-01-01'] }], 0, 0)).toBeNull();
  });

  it('stickiness counts intervals from 1; lifecycle names the status; retention the cohort', () => {
    expect(actorsQueryOf({ kind: 'StickinessQuery' }, [{ action: { order: 0 } }], 0, 2)).toMatchObject({ source: { series: 0, day: 3 } });
    expect(actorsQueryOf({ kind: 'LifecycleQuery' }, [{ status: 'new', days: ['2024-01-01'] }, { status: 'dormant', days: ['2024-01-01'] }], 1, 0)).toMatchObject({ source: { status: 'dormant', day: '2024-01-01' } });
    expect(actorsQueryOf({ kind: 'RetentionQuery' }, [{}, {}], 1, 0)).toMatchObject({ source: { kind: 'InsightActorsQuery', interval: 1 } });
    expect(actorsQueryOf({ kind: 'RetentionQuery' }, [{}], 1, 0)).toBeNull();
  });

  it('a funnel bar is the persons who reached its step, of its breakdown value when broken down', () => {
    const source = { kind: 'FunnelsQuery' };
    expect(actorsQueryOf(source, [{ count: 3 }, { count: 1 }], 0, 1)).toEqual({ ...page, source: { kind: 'FunnelsActorsQuery', source, funnelStep: 2 } });
    const broken = [[{ breakdown_value: ['US'] }, {}], [{ breakdown_value: ['DE'] }, {}]];
    expect(actorsQueryOf(source, broken, 1, 0)).toMatchObject({ source: { funnelStep: 1, funnelStepBreakdown: ['DE'] } });
  });
});

describe('a page of persons as the list shows them', () => {
  it('names a person by email, else name, else first distinct id, with their events when counted', () => {
    const answer = {
      columns: ['actor', 'event_count'],
      results: [
        [{ id: 'p1', distinct_ids: ['a', 'b'], properties: { email: 'a@example.com' } }, 3],
        [{ id: 'p2', distinct_ids: ['c'], properties: {} }, 1],
      ],
    };
    expect(actorRows(answer)).toEqual([
      { id: 'p1', name: 'a@example.com', distinctIds: 'a, b', events: 3 },
      { id: 'p2', name: 'c', distinctIds: 'c', events: 1 },
    ]);
    expect(actorRows({ columns: ['actor'], results: [[{ id: 'p3', distinct_ids: [], properties: { name: 'Zoë' } }]] })[0]).toMatchObject({ name: 'Zoë', events: null });
  });
});
