import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool, testConfig } from '@tributary/test-support';
import { bootstrap } from './bootstrap.js';
import { formatCredentials } from './credentials-file.js';

const config = testConfig();
const pool = createPool(config, { max: 2 });
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tributary-bootstrap-'));
});
afterAll(async () => {
  await pool.end();
  await rm(dir, { recursive: true, force: true });
});

describe('tributary bootstrap', () => {
  it('creates the demo project once, then reuses it without touching the file', async () => {
    const file = path.join(dir, 'fresh', 'credentials.env');
    const created = await bootstrap(pool, config, file);
    expect(created).toMatchObject({ reused: false });
    expect(created.replacedFileKeptAs).toBeUndefined();
    const written = await readFile(file, 'utf8');
    expect(written).toBe(formatCredentials(created.credentials));

    const again = await bootstrap(pool, config, file);
    expect(again).toEqual({ credentials: created.credentials, reused: true });
    expect(await readFile(file, 'utf8')).toBe(written);
  });

  it('says when it replaces a file naming what the database does not have, and keeps the old one', async () => {
    const file = path.join(dir, 'stale.env');
    const stale = formatCredentials({
      TRIBUTARY_URL: config.publicUrl,
      TRIBUTARY_PROJECT_ID: '2000000000',
      TRIBUTARY_PROJECT_API_KEY: 'phc_notInThisDatabase',
      TRIBUTARY_PERSONAL_API_KEY: 'phx_notInThisDatabase',
    });
    await writeFile(file, stale);
    const result = await bootstrap(pool, config, file);
    expect(result).toMatchObject({ reused: false, replacedFileKeptAs: `${file}.old` });
    expect(await readFile(`${file}.old`, 'utf8')).toBe(stale);
    expect(await readFile(file, 'utf8')).toBe(formatCredentials(result.credentials));
  });
});
