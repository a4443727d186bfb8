/**
 * A process that logs for the logger test: `node --import tsx logger-fixture.ts <mode>`. It logs
 * one line, then `exit` writes a marker straight to stdout and exits, `crash` throws, and `idle`
 * stays alive without logging again.
 */
import { writeSync } from 'node:fs';
import { createLogger } from './index.js';

const logger = createLogger('logger-fixture');
logger.info({ mode: process.argv[2] }, 'logged');
switch (process.argv[2]) {
  case 'exit':
    writeSync(1, 'MARKER\n');
    process.exit(0);
    break;
  case 'crash':
    throw new Error('fixture crash');
  case 'idle':
    setTimeout(() => undefined, 30_000);
    break;
}
