import fc from 'fast-check';
import { createClickHouse, serverOf, type ClickHouse } from '@tributary/clickhouse';
import { testConfig } from '@tributary/test-support';
import { CHANNEL_CASES, channelInputs, channelsInClickHouse, classified, inputsOf } from '../test/channel-cases.js';

/** The channel type expression the sessions table prints gives the plain classifier's channel on the stack's ClickHouse 18.16 (`channel-type-chdb.test.ts`: 26). */
let clickhouse: ClickHouse;
beforeAll(async () => {
  clickhouse = createClickHouse(testConfig());
});
afterAll(() => clickhouse.close());

it('agrees with the classifier on the listed cases', async () => {
  const inputs = CHANNEL_CASES.map(([, i]) => inputsOf(i));
  expect(await channelsInClickHouse(clickhouse, await serverOf(clickhouse), inputs)).toEqual(classified(inputs));
});

it('agrees with the classifier on generated inputs', async () => {
  const inputs = fc.sample(channelInputs, { numRuns: 300, seed: 62 });
  expect(await channelsInClickHouse(clickhouse, await serverOf(clickhouse), inputs)).toEqual(classified(inputs));
});
