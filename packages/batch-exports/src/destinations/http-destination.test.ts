import { batchBody, captureEvent } from './http-destination.js';

describe('HTTP batches, as PostHog sends them', () => {
  const record = {
    uuid: '018e0000-0000-7000-8000-000000000001',
    event: '$autocapture',
    properties: { $current_url: 'https://example.com', $ip: '1.2.3.4' },
    distinct_id: 'user-1',
    team_id: 4,
    timestamp: '2024-03-05T06:10:00.123Z',
    created_at: '2024-03-05T06:10:01.000Z',
    elements_chain: 'button:text="Buy"',
    person_id: 'p',
    person_properties: { email: 'a@b.c' },
    inserted_at: '2024-03-05T06:20:00.000Z',
  };

  it('send each event as a capture event, with GeoIP off and autocapture elements kept', () => {
    expect(captureEvent(record)).toEqual({
      uuid: record.uuid,
      distinct_id: 'user-1',
      timestamp: '2024-03-05T06:10:00.123Z',
      event: '$autocapture',
      properties: { $current_url: 'https://example.com', $ip: '1.2.3.4', $geoip_disable: true, $elements_chain: 'button:text="Buy"' },
    });
    expect(captureEvent({ ...record, event: '$pageview' }).properties).not.toHaveProperty('$elements_chain');
    expect(record.properties).not.toHaveProperty('$geoip_disable');
  });

  it('wrap a batch with the token as api_key, marked as a historical migration', () => {
    expect(JSON.parse(batchBody('phc_token', [captureEvent(record)]))).toEqual({ api_key: 'phc_token', historical_migration: true, batch: [captureEvent(record)] });
  });
});
