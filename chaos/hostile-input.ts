/**
 * Runs the hostile-input generator (chaos/hostile/hostile-input.ts) against the running system:
 *
 *   npx tsx chaos/hostile-input.ts [--seed N] [--min-requests N] [--concurrency N] [--only 'query where' ...]
 *
 * reads `$TRIBUTARY_STATE_DIR/credentials.env` (else `.tributary/credentials.env`), the front
 * door's URL and the services' ports from the config (PUBLIC_URL, *_PORT), checks the services'
 * pids and `/_health` before and after, prints a summary and exits non-zero on any finding,
 * a service lost included.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '@tributary/config';
import { runHostileInput, type Target } from './hostile/hostile-input.js';
import { keyIssuerFor } from './hostile/key-issuer.js';
import { checkServices, crashesBetween, readStackCredentials } from './state-dir.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, 'min-requests': { type: 'string' }, concurrency: { type: 'string' }, only: { type: 'string', multiple: true } } });
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn' });
  const stateDir = process.env.TRIBUTARY_STATE_DIR ?? '.tributary';
  const credentials = await readStackCredentials(stateDir);
  const target: Target = {
    frontUrl: config.publicUrl,
    projectId: Number(credentials.TRIBUTARY_PROJECT_ID),
    projectApiKey: credentials.TRIBUTARY_PROJECT_API_KEY,
    personalApiKey: credentials.TRIBUTARY_PERSONAL_API_KEY,
    keys: await keyIssuerFor(config, credentials.TRIBUTARY_PERSONAL_API_KEY),
  };
  const before = await checkServices(stateDir, config);
  const down = before.filter((s) => !s.alive || !s.healthy).map((s) => s.name);
  if (down.length > 0) console.error(`hostile: not running or unhealthy before the run: ${down.join(', ')}`);
  const result = await runHostileInput(target, {
    ...(values.seed ? { seed: Number(values.seed) } : {}),
    ...(values['min-requests'] ? { minRequests: Number(values['min-requests']) } : {}),
    ...(values.concurrency ? { concurrency: Number(values.concurrency) } : {}),
    ...(values.only ? { only: values.only } : {}),
    log: (line) => console.error(line),
  });
  await target.keys?.close();
  const crashes = crashesBetween(before, await checkServices(stateDir, config));

  const rows = Object.entries(result.byRoute)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([route, r]) => `${String(r.requests).padStart(6)} ${r.seconds.toFixed(0).padStart(5)} s  ${route}  ${Object.entries(r.status).map(([s, n]) => `${s}:${n}`).join(' ')}`);
  console.log(rows.join('\n'));
  for (const f of result.failures) console.log(`FAIL ${f.status} ${f.method} ${f.path} [${f.case}] ${JSON.stringify(f.body)}`);
  if (crashes.length > 0) console.log(`CRASHED ${crashes.join(', ')}`);
  console.log(`HOSTILE requests=${result.requests} routes=${Object.keys(result.byRoute).length} unexpected_5xx=${result.unexpected5xx} non_json_4xx=${result.non_json_4xx} crashes=${crashes.length}`);
  process.exit(result.unexpected5xx + result.non_json_4xx + crashes.length > 0 ? 1 : 0);
}

await main();
