/**
 * A service for the workers test: `node --import tsx workers-fixture.ts <workers> [fail]`. Each
 * worker prints its pid and port once it listens; `/slow` answers after 500 ms, to be caught by a
 * drain; with `fail` every worker throws before listening.
 */
import { createLogger } from '@tributary/logger';
import { runAsWorkers, startServiceRuntime } from './index.js';

const logger = createLogger('workers-fixture', 'silent');
await runAsWorkers('fixture', Number(process.argv[2]), logger);
if (process.argv[3] === 'fail') throw new Error('cannot start');
const runtime = await startServiceRuntime({
  name: 'fixture',
  logger,
  host: '127.0.0.1',
  port: 0,
  shutdownTimeoutMs: 5_000,
  routes: (app) => {
    app.get('/pid', (_req, res) => res.json({ pid: process.pid }));
    app.get('/slow', (_req, res) => setTimeout(() => res.json({ pid: process.pid }), 500));
  },
  dependencies: {},
  stop: async () => undefined,
});
console.log(JSON.stringify({ pid: process.pid, port: runtime.port }));
