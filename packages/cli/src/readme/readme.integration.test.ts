import { spawn } from 'node:child_process';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, createTestTenant, testConfig, uniqueName, type TestTenant } from '@tributary/test-support';
import { writeCredentials } from '../credentials-file.js';
import { outputMatches, readmeExamples } from './readme-examples.js';

/**
 * Runs the README's examples as written (readme-examples.ts says which and how their output is
 * compared), in one shell, against the running stack's front door, as a newcomer would right
 * after `make up`. Two things differ, so that the test can run any number of times on a stack
 * other tests share and leave it as it was:
 * - the shell starts in a scratch folder whose `.tributary/credentials.env` names a fresh project
 *   and all-scopes key (what `make up` writes on a fresh machine) and whose `node_modules` is the
 *   checkout's, so `source .tributary/credentials.env` and `npx tributary` work as written;
 * - the e-mail addresses the CLI examples create users for are made unique to the run.
 * The batch export the README makes is deleted afterwards, so it does not run every hour after.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const config = testConfig();
const pool = createPool(config, { max: 2 });
let tenant: TestTenant;
let scratch: string;

beforeAll(async () => {
  tenant = await createTestTenant(pool, config);
  scratch = await mkdtemp(path.join(tmpdir(), 'tributary-readme-'));
  await symlink(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
  await mkdir(path.join(scratch, '.tributary'));
  await writeCredentials(path.join(scratch, '.tributary', 'credentials.env'), {
    TRIBUTARY_URL: config.publicUrl,
    TRIBUTARY_PROJECT_ID: String(tenant.project.id),
    TRIBUTARY_PROJECT_API_KEY: tenant.project.api_token,
    TRIBUTARY_PERSONAL_API_KEY: tenant.personalApiKey,
  });
});

afterAll(async () => {
  const exports = await pool.query<{ id: string }>('SELECT id FROM batch_exports WHERE team_id = $1', [tenant.project.id]);
  for (const { id } of exports.rows) {
    const response = await fetch(`${config.publicUrl}/api/environments/${tenant.project.id}/batch_exports/${id}/`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${tenant.personalApiKey}` },
    });
    expect(response.ok).toBe(true);
  }
  await pool.end();
  await rm(scratch, { recursive: true, force: true });
});

/**
 * One bash reading commands from its stdin, so that each command's output and exit status are
 * read apart, and one can be run again: a read (`curl` with no body) of something ingest or a
 * cache has not caught up with yet is retried, as a reader would after a moment, for up to a minute.
 */
class Shell {
  private readonly child;
  private stdout = '';
  stderr = '';
  private readonly marker = `@@${uniqueName('readme')}`;
  private waiting: (() => void) | null = null;
  private exited = false;

  constructor(cwd: string) {
    this.child = spawn('bash', [], { cwd, env: { ...process.env, TRIBUTARY_ENV: 'development' }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      this.waiting?.();
    });
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.child.on('close', () => {
      this.exited = true;
      this.waiting?.();
    });
  }

  async run(command: string): Promise<{ output: string; status: number }> {
    this.child.stdin.write(`${command}\nprintf '\\n${this.marker} %d\\n' $?\n`);
    const done = new RegExp(`\\n${this.marker} (\\d+)\\n`);
    // A command the README leaves unfinished (an open quote) would swallow the marker and wait forever.
    const deadline = Date.now() + 240_000;
    for (;;) {
      const match = done.exec(this.stdout);
      if (match) {
        const output = this.stdout.slice(0, match.index);
        this.stdout = this.stdout.slice(match.index + match[0].length);
        return { output, status: Number(match[1]) };
      }
      if (this.exited || Date.now() > deadline) throw new Error(`no end to ${JSON.stringify(command)}; output so far: ${this.stdout}; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 1000);
      });
    }
  }

  close(): void {
    this.child.stdin.end();
  }
}

const isRead = (command: string) => command.startsWith('curl ') && !/\s-(d|X)\s/.test(command);

describe('README.md', () => {
  it('finds what make up made for its export examples: the analytics bucket in S3Proxy and the analytics database', async () => {
    const s3 = new S3Client({
      endpoint: config.s3Endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
    });
    try {
      const head = await s3.send(new HeadBucketCommand({ Bucket: 'analytics' }));
      expect(head.$metadata.httpStatusCode).toBe(200);
    } finally {
      s3.destroy();
    }
    const { rows } = await pool.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname = 'analytics'");
    expect(rows).toEqual([{ datname: 'analytics' }]);
  });

  it('prints what it shows for every example, run as written on the running stack', async () => {
    const readme = await readFile(path.join(root, 'README.md'), 'utf8');
    const examples = readmeExamples(readme);
    expect(examples.length).toBeGreaterThan(10);
    const suffix = uniqueName('run');
    const unique = (command: string) => command.replace(/\b(me|ann)@example\.com\b/g, `$1-${suffix}@example.com`);
    const shell = new Shell(scratch);
    try {
      for (const example of examples) {
        const command = unique(example.command);
        const shown = example.expected === null ? null : unique(example.expected);
        const deadline = Date.now() + 60_000;
        let ran = await shell.run(command);
        while (shown !== null && !outputMatches(shown, ran.output) && isRead(command) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          ran = await shell.run(command);
        }
        const seen = { line: example.line, command: example.command, status: ran.status, output: shown === null || outputMatches(shown, ran.output) ? 'as shown' : ran.output };
        expect({ ...seen, stderr: seen.status === 0 ? '' : shell.stderr }).toEqual({ line: example.line, command: example.command, status: 0, output: 'as shown', stderr: '' });
      }
    } finally {
      shell.close();
    }
  }, 600_000);
});
