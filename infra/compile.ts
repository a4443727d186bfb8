/**
 * Compiles every workspace's `src/` to JavaScript in its `dist/`, file for file (no bundling, so
 * each module resolves its imports from where it always did), for the services to run without
 * a TypeScript loader: tsx's loader thread and the transformed sources cost each process about
 * 35 MB of memory. Packages export `dist/` under the `tributary-compiled` condition, so
 * `node --conditions=tributary-compiled services/<name>/dist/main.js` runs compiled code only;
 * tests, benches and the CLI keep running the sources. Type checking is `npm run typecheck`'s.
 * Output is overwritten in place, never cleared first: running services and their cluster workers
 * load from it. The output of a deleted source stays behind, unused.
 * Run: npx tsx infra/compile.ts
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const root = path.resolve(import.meta.dirname, '..');

async function sourcesOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

const workspaces = [];
for (const parent of ['packages', 'services']) {
  for (const name of await readdir(path.join(root, parent))) workspaces.push(path.join(root, parent, name));
}
await Promise.all(
  workspaces.map(async (workspace) => {
    const src = path.join(workspace, 'src');
    const dist = path.join(workspace, 'dist');
    await build({
      entryPoints: await sourcesOf(src),
      outdir: dist,
      outbase: src,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
  }),
);
console.log(`compiled ${workspaces.length} workspaces`);
