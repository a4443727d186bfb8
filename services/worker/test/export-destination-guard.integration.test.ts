import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DestinationGuard, destinationPolicy, destinationRefusal, type Resolve } from '@tributary/batch-exports';
import { createTestTenant, type TestTenant } from '@tributary/test-support';
import { executeRun } from '../src/batch-exports/run-executor.js';
import { batchReceiver, clickhouse, config, executorDeps, exportWithRun, pool, runRow, storeWindowEvents } from './export-fixture.js';

/**
 * A run reaches only the address its destination was checked at, as it connects: the attacks of
 * issue 65 (a tenant's export reading the stack's ClickHouse and its answer landing in the run's
 * latest_error) against the whole run, with the worker's real destinations.
 */
let tenant: TestTenant;
const servers: Server[] = [];
const CLICKHOUSE_PORT = Number(new URL(config.clickhouseUrl).port);
// What ClickHouse would answer the query the attacker sends it, and what the redirecting server says.
const ANSWER = 'ANSWER_OF_CLICKHOUSE';
const REDIRECT_BODY = 'BODY_OF_THE_REDIRECT';
const attack = `http://127.0.0.1:${CLICKHOUSE_PORT}/?query=${encodeURIComponent(`SELECT '${ANSWER}'`)}`;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  const other = await createTestTenant(pool, config);
  await storeWindowEvents(tenant.project.id, other.project.id, 20);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await pool.end();
  await clickhouse.close();
});

/** The guard of a worker whose operator allows these loopback ports; names resolve as `resolve` says. */
const guardAllowing = (ports: number[], resolve?: Resolve) =>
  new DestinationGuard(destinationPolicy({ ...config, batchExportAllowedDestinations: ports.map((port) => `127.0.0.1:${port}`) }), resolve);

async function runOnce(url: string, guard: DestinationGuard) {
  const { runId } = await exportWithRun(tenant.project.id, 'HTTP', { url, token: 'phc_test', include_events: null, exclude_events: null });
  // The last attempt: a refusal is final whatever it is.
  await executeRun(runId, { ...executorDeps(1_000, 30_000, 1, guard) }, true);
  return runRow(runId);
}

describe("an export run reaches only someone else's server", () => {
  it("refuses a stored export aimed at the stack's ClickHouse, and its error holds nothing ClickHouse said", async () => {
    const run = await runOnce(attack, guardAllowing([CLICKHOUSE_PORT]));
    expect(run.status).toBe('Failed');
    expect(run.latest_error).toBe(`HTTP endpoint http://127.0.0.1:${CLICKHOUSE_PORT}/: refused: 127.0.0.1:${CLICKHOUSE_PORT} is this installation's ClickHouse (HTTP)`);
    expect(run.latest_error).not.toContain(ANSWER);
  });

  it('does not follow an allowed server that redirects to ClickHouse, and quotes neither answer', async () => {
    const redirecting = createServer((_, response) => response.writeHead(302, { location: attack }).end(REDIRECT_BODY));
    servers.push(redirecting);
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const port = (redirecting.address() as AddressInfo).port;
    const run = await runOnce(`http://127.0.0.1:${port}/batch/`, guardAllowing([port, CLICKHOUSE_PORT]));
    expect(run.status).toBe('Failed');
    expect(run.latest_error).toBe(`HTTP endpoint http://127.0.0.1:${port}/batch/: answered 302, a redirect, which is not followed`);
    expect(run.latest_error).not.toContain(ANSWER);
    expect(run.latest_error).not.toContain(REDIRECT_BODY);
  });

  it('checks again when it connects: a name that resolved outside when the export was saved and inside at run time is refused (DNS rebinding)', async () => {
    const receiver = await batchReceiver();
    const port = Number(new URL(receiver.url).port);
    const answers = [['93.184.216.34'], ['127.0.0.1']];
    const guard = guardAllowing([], async () => answers.shift() ?? ['127.0.0.1']);
    const url = `http://rebinding.example.com:${port}/batch/`;
    expect(await destinationRefusal({ type: 'HTTP', config: { url, token: 'phc_test', include_events: null, exclude_events: null } }, guard)).toBeNull();
    const run = await runOnce(url, guard);
    await receiver.close();
    expect(run.status).toBe('Failed');
    expect(run.latest_error).toBe(`HTTP endpoint http://rebinding.example.com:${port}/batch/: refused: rebinding.example.com resolves to 127.0.0.1, which is loopback, not a public address`);
    expect(receiver.bodies).toEqual([]);
  });

  it('delivers to an allowed receiver by the address its name resolved to', async () => {
    const receiver = await batchReceiver();
    const port = Number(new URL(receiver.url).port);
    const run = await runOnce(`http://receiver.example.com:${port}/batch/`, guardAllowing([port], async () => ['127.0.0.1']));
    await receiver.close();
    expect(run).toMatchObject({ status: 'Completed', latest_error: null });
    expect(receiver.uuids()).toHaveLength(20);
  });
});
