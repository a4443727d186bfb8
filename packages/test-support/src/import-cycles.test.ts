import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Each workspace's exports as TypeScript paths, so that an import of `@tributary/...` is followed
 * into the package's sources: a cycle through two packages is a cycle too.
 */
function workspacePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const parent of ['packages', 'services']) {
    for (const name of readdirSync(path.join(root, parent))) {
      const { name: packageName, exports } = JSON.parse(readFileSync(path.join(root, parent, name, 'package.json'), 'utf8')) as { name: string; exports?: Record<string, { default: string }> };
      for (const [subpath, target] of Object.entries(exports ?? {})) {
        paths[path.posix.join(packageName, subpath)] = [path.posix.join(parent, name, target.default)];
      }
    }
  }
  return paths;
}

// A module that imports itself through others runs with one of them half-loaded, and no one
// reading either file alone can tell which.
test('no module imports itself through others, within a workspace or across workspaces', async () => {
  const graph = await madge(
    ['packages', 'services', 'bench', 'chaos'].map((dir) => path.join(root, dir)),
    { baseDir: root, fileExtensions: ['ts'], excludeRegExp: [/\/dist\//, /\/node_modules\//], tsConfig: { compilerOptions: { baseUrl: root, module: 'NodeNext', moduleResolution: 'NodeNext', paths: workspacePaths() } } },
  );
  expect(graph.warnings().skipped).toEqual([]);
  expect(graph.circular()).toEqual([]);
});
