import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOG_FLUSH_INTERVAL_MS } from './index.js';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'logger-fixture.ts');

/** Runs the fixture; resolves with its stdout once `done` says so (then stops it) or it exits. */
function run(mode: string, done: (stdout: string) => boolean = () => false): Promise<{ stdout: string; exited: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, mode], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (done(stdout)) {
        child.kill('SIGKILL');
        resolve({ stdout, exited: false });
      }
    });
    child.once('error', reject);
    child.once('exit', () => resolve({ stdout, exited: true }));
  });
}

describe('createLogger', () => {
  it('writes lines in blocks rather than one write each, and flushes what is left when the process exits', async () => {
    const { stdout } = await run('exit');
    // The marker went straight to stdout while the line still waited in its block.
    expect(stdout.indexOf('MARKER')).toBeGreaterThanOrEqual(0);
    expect(stdout.indexOf('"msg":"logged"')).toBeGreaterThan(stdout.indexOf('MARKER'));
  });

  it('flushes on an uncaught exception too', async () => {
    const { stdout } = await run('crash');
    expect(stdout).toContain('"mode":"crash"');
  });

  it('writes a quiet process line within the flush interval', async () => {
    const started = Date.now();
    const { stdout, exited } = await run('idle', (out) => out.includes('"msg":"logged"'));
    expect(exited).toBe(false);
    expect(JSON.parse(stdout)).toMatchObject({ level: 30, service: 'logger-fixture', mode: 'idle', msg: 'logged' });
    // Start-up through tsx takes most of this; the bound is what catches a line left waiting for the block to fill.
    expect(Date.now() - started).toBeLessThan(20_000 + LOG_FLUSH_INTERVAL_MS);
  }, 40_000);
});
