import type { ClickHouse } from './client.js';
import { CLICKHOUSE_18_16, isAtLeast, parseServerVersion, serverOf } from './server-version.js';

/** A client that answers version() with `answers`, one per ask, counting the asks. */
function fakeClient(answers: (string | Error)[]): ClickHouse & { asks: number } {
  const client = {
    asks: 0,
    async query<Row>(): Promise<Row[]> {
      const answer = answers[client.asks++]!;
      if (answer instanceof Error) throw answer;
      return [{ version: answer }] as Row[];
    },
  };
  return client as unknown as ClickHouse & { asks: number };
}

test("a version's release is its first two numbers", () => {
  expect(parseServerVersion('26.7.2.1')).toEqual({ version: '26.7.2.1', major: 26, minor: 7 });
  expect(CLICKHOUSE_18_16).toMatchObject({ major: 18, minor: 16 });
  expect(() => parseServerVersion('banana')).toThrow('not a release number');
  expect([isAtLeast(parseServerVersion('21.9.1'), 21, 9), isAtLeast(parseServerVersion('21.8.9'), 21, 9), isAtLeast(parseServerVersion('22.1'), 21, 9)]).toEqual([true, false, true]);
});

test('the version is asked once per client; a failed ask is asked again', async () => {
  const client = fakeClient([new Error('connection refused'), '18.16.1', '26.7.2.1']);
  await expect(serverOf(client)).rejects.toThrow('connection refused');
  expect(await serverOf(client)).toMatchObject({ major: 18, minor: 16 });
  expect(await serverOf(client)).toMatchObject({ major: 18, minor: 16 });
  expect(client.asks).toBe(2);
  const other = fakeClient(['26.7.2.1']);
  expect(await serverOf(other)).toMatchObject({ major: 26, minor: 7 });
});
