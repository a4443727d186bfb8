import { PostHog } from 'posthog-node';
import { PostHog as PostHogV4 } from 'posthog-node-v4';
import { uniqueName } from '@tributary/test-support';
import { startCapture, type CaptureHarness } from './capture-harness.js';

/**
 * The real posthog-node SDKs as clients of capture: 5.x gzips its /batch/ bodies, 4.x sends plain
 * JSON. Every call must reach Kafka with the event, distinct id and properties the SDK sent.
 */
let capture: CaptureHarness;

beforeAll(async () => {
  capture = await startCapture();
}, 60_000);

afterAll(async () => {
  await capture.close();
});

interface PublishedEvent {
  event: string;
  distinct_id: string;
  properties: Record<string, any>;
}

async function publishedFor(distinctIds: string[], atLeast: number): Promise<PublishedEvent[]> {
  const published = await capture.readEvents(capture.topics.realtime, atLeast);
  return published.map(({ event }) => JSON.parse(event.data) as PublishedEvent).filter((event) => distinctIds.includes(event.distinct_id));
}

const sdks: [string, (token: string, host: string) => PostHog | PostHogV4][] = [
  ['posthog-node 5', (token, host) => new PostHog(token, { host, flushAt: 20, flushInterval: 0 })],
  ['posthog-node 4.10', (token, host) => new PostHogV4(token, { host, flushAt: 20, flushInterval: 0 })],
];

describe.each(sdks)('%s', (name, make) => {
  it('capture, identify, alias and groupIdentify reach Kafka intact', async () => {
    const client = make(capture.tenant.project.api_token, capture.url);
    const user = uniqueName('sdk');
    const anonymous = uniqueName('anon');
    const errors: unknown[] = [];
    client.on('error', (error: unknown) => errors.push(error));
    client.capture({ distinctId: user, event: 'purchase', properties: { amount: 42, sdk: name }, groups: { company: 'acme' } });
    client.identify({ distinctId: user, properties: { email: 'ada@example.test' } });
    client.alias({ distinctId: user, alias: anonymous });
    client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { seats: 12 } });
    await client.shutdown();
    expect(errors).toEqual([]);

    const events = await publishedFor([user, anonymous, '$company_acme', 'acme'], 4);
    const byName = (event: string) => events.find((e) => e.event === event);
    expect(byName('purchase')).toMatchObject({ distinct_id: user, properties: { amount: 42, sdk: name, $groups: { company: 'acme' } } });
    expect(byName('$identify')).toMatchObject({ distinct_id: user, properties: { $set: { email: 'ada@example.test' } } });
    expect(byName('$create_alias')).toMatchObject({ distinct_id: user, properties: { alias: anonymous } });
    expect(byName('$groupidentify')).toMatchObject({ properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 12 } } });
  });
});
