// An esbuild plugin for building claw-eval inside a copy of the repository (StrykerJS's sandbox):
// the workspace packages come from the copy's own sources, so that the mutated engine is the one
// bundled, and third-party packages from the project the copy was made of.
//
// A copy has no node_modules while it is built (Stryker links them in after the build command),
// and the links it would get point back at the original tree: pnpm links each workspace package
// by a relative path, which leads out of the copy to the sources nobody mutated.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const workspaceImport = /^@claw\/([a-z0-9-]+)(\/.*)?$/;

/**
 * The source file a workspace import names in the tree at `root`: the "@claw/source" entry of
 * the package's export map (`packages/<name>`, the only folder claw-eval's packages live in).
 */
function workspaceSource(root, name, subpath) {
  const dir = path.join(root, 'packages', name);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entry = manifest.exports?.[subpath === undefined ? '.' : `.${subpath}`];
  const source = typeof entry === 'object' && entry !== null ? entry['@claw/source'] : undefined;
  if (typeof source !== 'string') {
    throw new Error(`@claw/${name}${subpath ?? ''} has no "@claw/source" export in ${dir}`);
  }
  return path.join(dir, source);
}

const passThrough = Symbol('workspace-sources');

/**
 * Resolves `@claw/<name>` imports to the sources under `root` (the tree being built), and the
 * other bare imports of files under `root` as if they were made from the same place in
 * `modulesFrom` (the tree whose node_modules are installed; `root` itself by default).
 *
 * @param {{ root: string, modulesFrom?: string }} options
 */
export function workspaceSources({ root, modulesFrom = root }) {
  const inside = (file) => {
    const relative = path.relative(root, file);
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) &&
      !relative.split(path.sep).includes('node_modules');
  };
  return {
    name: 'workspace-sources',
    setup(build) {
      build.onResolve({ filter: workspaceImport }, (args) => {
        const [, name, subpath] = workspaceImport.exec(args.path);
        return { path: workspaceSource(root, name, subpath) };
      });
      if (path.resolve(modulesFrom) === path.resolve(root)) return;
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === passThrough || !inside(args.importer)) return undefined;
        const resolveDir = path.join(modulesFrom, path.relative(root, args.resolveDir));
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir,
          importer: args.importer,
          pluginData: passThrough,
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        const { path: file, external, namespace, sideEffects, suffix } = resolved;
        return { path: file, external, namespace, sideEffects, suffix };
      });
    },
  };
}
