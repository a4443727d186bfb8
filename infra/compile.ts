/**
 * Compiles every workspace's `src/` to JavaScript in its `dist/`, file for file (no bundling, so
 * each module resolves its imports from where it always did), for the services to run without
 * a TypeScript loader: tsx's loader thread and the transformed sources cost each process about
 * 35 MB of memory. Packages export `dist/` under the `tributary-compiled` condition, so
 * `node --conditions=tributary-compiled services/<name>/dist/main.js` runs compiled code only;
 * tests, benches and the CLI keep running the sources. Type checking is `npm run typecheck`'s.
 * Running services and their cluster workers load from the output while another service starts
 * and compiles (the chaos suite restarts them one by one), so a file is only written when its
 * content changes, and then whole, renamed into place. The output of a deleted source stays
 * behind, unused.
 * Run: npx tsx infra/compile.ts
 */
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');
const CONDITION = 'tributary-compiled';

async function sourcesOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

// The console runs in the browser, bundled by Vite (infra/console.sh), not on Node.
const BROWSER_WORKSPACES = new Set(['services/console']);
const workspaces = [];
for (const parent of ['packages', 'services']) {
  for (const name of await readdir(path.join(root, parent))) {
    if (!BROWSER_WORKSPACES.has(`${parent}/${name}`)) workspaces.push(path.join(root, parent, name));
  }
}
// An export without the condition would load TypeScript into a compiled service, which Node
// refuses at start-up with an error that names neither the package nor the fix.
for (const workspace of workspaces) {
  const { name, exports } = JSON.parse(await readFile(path.join(workspace, 'package.json'), 'utf8')) as { name: string; exports?: Record<string, unknown> };
  for (const [subpath, target] of Object.entries(exports ?? {})) {
    const compiled = typeof target === 'object' && target !== null ? (target as Record<string, unknown>)[CONDITION] : undefined;
    if (typeof compiled !== 'string') throw new Error(`${name}: export "${subpath}" has no "${CONDITION}" target; add one pointing into dist/, as the other packages do`);
  }
}

await Promise.all(
  workspaces.map(async (workspace) => {
    const src = path.join(workspace, 'src');
    const dist = path.join(workspace, 'dist');
    const { outputFiles } = await build({
      write: false,
      entryPoints: await sourcesOf(src),
      outdir: dist,
      outbase: src,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    for (const file of outputFiles) {
      const current = await readFile(file.path).catch(() => null);
      if (current?.equals(file.contents)) continue;
      await mkdir(path.dirname(file.path), { recursive: true });
      // Named per process: two services may start, and compile, at once.
      const temporary = `${file.path}.${process.pid}.tmp`;
      await writeFile(temporary, file.contents);
      await rename(temporary, file.path);
    }
  }),
);
console.log(`compiled ${workspaces.length} workspaces`);
