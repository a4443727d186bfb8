import fc from 'fast-check';
import { serverOf, type ClickHouse } from '@tributary/clickhouse';
import { CHANNEL_CASES, channelInputs, channelsInClickHouse, classified, inputsOf } from '../test/channel-cases.js';

/** The channel type expression the sessions table prints gives the plain classifier's channel on ClickHouse 26 (`channel-type.integration.test.ts`: 18.16). */
let clickhouse: ClickHouse;
beforeAll(async () => {
  clickhouse = await (await import('@tributary/test-support/chdb')).createChdbClickHouse();
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
