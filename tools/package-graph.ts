// Checks the workspace's package graph and packaging rules (DESIGN.md): dependencies point only
// downwards, there are no cycles, every package declares what its source imports, libraries are
// ESM with an exports map and `sideEffects: false`, the published apps are bundled commands, and
// the other apps stay private.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface WorkspacePackage {
  name: string;
  /** Folder relative to the repository root, e.g. `packages/core`. */
  dir: string;
  manifest: Record<string, unknown>;
  /** Workspace package names imported by the package's source files (`src/`). */
  sourceImports: string[];
  /** Workspace package names imported by its tests (`test/`). */
  testImports?: string[];
}

export interface GraphViolation {
  package: string;
  rule:
    | 'unknown-package'
    | 'upward-edge'
    | 'sideways-edge'
    | 'cycle'
    | 'undeclared-import'
    | 'packaging'
    | 'privacy'
    | 'version-group';
  message: string;
}

/**
 * The layers of the package graph: a package may depend only on packages of a lower layer.
 * Keep this table in step with the diagram in DESIGN.md.
 */
export const defaultLayers: Readonly<Record<string, number>> = {
  '@claw/core': 0,
  '@claw/sandbox': 1,
  '@claw/session-store': 1,
  '@claw/testing': 1,
  '@claw/approval': 2,
  '@claw/provider': 2,
  '@claw/engine': 3,
  '@claw/mcp': 3,
  '@claw/a2a': 3,
  '@claw/session-store-pg': 3,
  '@claw/runtime': 4,
  '@claw/channel': 5,
  '@claw/cli': 6,
  '@claw/server': 6,
  '@claw/web': 6,
  '@claw/eval': 6,
  '@claw/bench': 6,
};

/**
 * The apps published as commands (DIST-1): bundled (`tools/app-bundle.ts`), so what their source
 * imports is a build-time devDependency and nothing of the workspace is installed beside them.
 * The other apps (the web console, which claw-server carries, and the benchmarks) stay private.
 */
export const publishedApps: ReadonlySet<string> = new Set(['@claw/cli', '@claw/server', '@claw/eval']);

const dependencyFields = [
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'optionalDependencies',
] as const;

function dependencyMap(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function declaredDependencies(manifest: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const field of dependencyFields) {
    const value = manifest[field];
    if (typeof value === 'object' && value !== null) {
      for (const name of Object.keys(value)) names.add(name);
    }
  }
  return [...names];
}

/** Workspace edges: package name → workspace packages it depends on. */
export function workspaceEdges(packages: readonly WorkspacePackage[]): Map<string, string[]> {
  const names = new Set(packages.map((pkg) => pkg.name));
  return new Map(
    packages.map((pkg) => [
      pkg.name,
      declaredDependencies(pkg.manifest).filter((dependency) => names.has(dependency)),
    ]),
  );
}

/** Every elementary cycle found by depth-first search, each as a path that ends where it starts. */
export function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      const seen = state.get(next);
      if (seen === 'visiting') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (seen === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...edges.keys()].sort()) {
    if (!state.has(node)) visit(node);
  }
  return cycles;
}

export function checkPackageGraph(
  packages: readonly WorkspacePackage[],
  layers: Readonly<Record<string, number>> = defaultLayers,
): GraphViolation[] {
  const violations: GraphViolation[] = [];
  const edges = workspaceEdges(packages);
  for (const pkg of packages) {
    const layer = layers[pkg.name];
    if (layer === undefined) {
      violations.push({
        package: pkg.name,
        rule: 'unknown-package',
        message: `${pkg.name} (${pkg.dir}) has no layer: add it to the layer table in tools/package-graph.ts and to DESIGN.md`,
      });
      continue;
    }
    for (const dependency of edges.get(pkg.name) ?? []) {
      const dependencyLayer = layers[dependency];
      if (dependencyLayer === undefined || dependencyLayer < layer) continue;
      violations.push({
        package: pkg.name,
        rule: dependencyLayer > layer ? 'upward-edge' : 'sideways-edge',
        message:
          `${pkg.name} (layer ${layer}) must not depend on ${dependency} (layer ${dependencyLayer}): ` +
          'packages may only depend on lower layers; move the shared piece down instead',
      });
    }
    const declared = new Set(declaredDependencies(pkg.manifest));
    const runtime = new Set(Object.keys(dependencyMap(pkg.manifest.dependencies)));
    // A published app bundles what its source imports: a devDependency is what it needs.
    const shipped = publishedApps.has(pkg.name) ? declared : runtime;
    for (const imported of pkg.sourceImports) {
      if (imported === pkg.name) continue;
      // What src/ imports ships with the package: a devDependency would be missing when installed.
      if (!shipped.has(imported)) {
        violations.push({
          package: pkg.name,
          rule: 'undeclared-import',
          message: declared.has(imported)
            ? `${pkg.name} imports ${imported} in src/ but lists it only as a devDependency`
            : `${pkg.name} imports ${imported} without declaring it in package.json`,
        });
      }
    }
    for (const imported of pkg.testImports ?? []) {
      if (imported !== pkg.name && !declared.has(imported)) {
        violations.push({
          package: pkg.name,
          rule: 'undeclared-import',
          message: `${pkg.name} imports ${imported} in its tests without declaring it in package.json`,
        });
      }
    }
  }
  for (const cycle of findCycles(edges)) {
    violations.push({
      package: cycle[0] ?? '',
      rule: 'cycle',
      message: `dependency cycle: ${cycle.join(' → ')}`,
    });
  }
  return violations;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Packaging rules for one package: libraries as DESIGN.md says; published apps (`publishedApps`)
 * with a `bin`, `files` and `engines.node` and no workspace package among their `dependencies`
 * (they are bundled); the other apps (private) only need to be ESM.
 */
export function checkPackaging(pkg: WorkspacePackage): GraphViolation[] {
  const problems: string[] = [];
  const { manifest } = pkg;
  if (manifest.type !== 'module') problems.push('"type" must be "module" (ESM only)');
  const isApp = pkg.dir.startsWith('apps/') || pkg.dir === 'eval' || pkg.dir === 'bench';
  const isPublishedApp = isApp && publishedApps.has(pkg.name);
  if ((isApp && !isPublishedApp) !== (manifest.private === true)) {
    return [
      {
        package: pkg.name,
        rule: 'privacy',
        message: !isApp
          ? `${pkg.name} is a library and must not be private`
          : isPublishedApp
            ? `${pkg.name} is a published app and must not be private`
            : `${pkg.name} is an app and must be "private": true`,
      },
    ];
  }
  if (isPublishedApp) {
    if (!isRecord(manifest.bin) || Object.keys(manifest.bin).length === 0) {
      problems.push('"bin" must name its command');
    }
    if (!Array.isArray(manifest.files) || !manifest.files.includes('dist')) {
      problems.push('"files" must list "dist"');
    }
    const engines = manifest.engines;
    if (!isRecord(engines) || typeof engines.node !== 'string') {
      problems.push('"engines.node" must be set');
    }
    const bundled = Object.keys(dependencyMap(manifest.dependencies))
      .filter((name) => name.startsWith('@claw/'));
    if (bundled.length > 0) {
      problems.push(
        `it is bundled: list ${bundled.join(', ')} under "devDependencies", not "dependencies"`,
      );
    }
  }
  if (!isApp) {
    if (manifest.sideEffects !== false) problems.push('"sideEffects" must be false');
    if (!Array.isArray(manifest.files) || !manifest.files.includes('dist')) {
      problems.push('"files" must list "dist"');
    }
    const engines = manifest.engines;
    if (!isRecord(engines) || typeof engines.node !== 'string') {
      problems.push('"engines.node" must be set');
    }
    if ('main' in manifest || 'module' in manifest) {
      problems.push('use only the "exports" map, not "main"/"module"');
    }
    const exportsMap = manifest.exports;
    if (!isRecord(exportsMap)) {
      problems.push('an "exports" map is required');
    } else {
      if (exportsMap['./package.json'] !== './package.json') {
        problems.push('"exports" must expose "./package.json"');
      }
      for (const [entry, target] of Object.entries(exportsMap)) {
        if (entry === './package.json') continue;
        if (!isRecord(target)) {
          problems.push(`export "${entry}" must map conditions (types, import)`);
          continue;
        }
        const conditions = Object.keys(target).filter((key) => key !== '@claw/source');
        if (conditions[0] !== 'types' || !conditions.includes('import')) {
          problems.push(`export "${entry}" must list "types" first, then "import"`);
        }
        if (typeof target['@claw/source'] !== 'string') {
          problems.push(`export "${entry}" needs an "@claw/source" condition for tests`);
        }
      }
    }
  }
  return problems.map((problem) => ({
    package: pkg.name,
    rule: 'packaging' as const,
    message: `${pkg.name}: ${problem}`,
  }));
}

/**
 * The fixed version group in `.changeset/config.json` must be exactly the published packages:
 * the libraries and the published apps.
 */
export function checkVersionGroup(
  packages: readonly WorkspacePackage[],
  changesetConfig: unknown,
): GraphViolation[] {
  const published = packages.filter((pkg) => pkg.manifest.private !== true).map((pkg) => pkg.name);
  const fixed = isRecord(changesetConfig) ? changesetConfig.fixed : undefined;
  const onlyGroup = Array.isArray(fixed) && fixed.length === 1 ? (fixed[0] as unknown) : undefined;
  const group: unknown[] = Array.isArray(onlyGroup) ? onlyGroup : [];
  const missing = published.filter((name) => !group.includes(name));
  const extra = group.filter((name) => !published.includes(String(name)));
  if (missing.length === 0 && extra.length === 0) return [];
  return [
    {
      package: '.changeset/config.json',
      rule: 'version-group',
      message:
        'the one fixed version group must list exactly the published packages' +
        (missing.length > 0 ? `; missing: ${missing.join(', ')}` : '') +
        (extra.length > 0 ? `; not published: ${extra.map(String).join(', ')}` : ''),
    },
  ];
}

const importPattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](@claw\/[a-z0-9-]+)(?:\/[^'"]*)?['"]/g;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile() && /\.(?:ts|tsx|mts|js|mjs)$/.test(entry.name))
    .filter((entry) => !entry.parentPath.split(path.sep).includes('node_modules'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Reads every workspace package (packages/*, apps/*, eval, bench) under `root`. */
export async function readWorkspacePackages(root: string): Promise<WorkspacePackage[]> {
  const dirs: string[] = ['eval', 'bench'];
  for (const group of ['packages', 'apps']) {
    const entries = await readdir(path.join(root, group), { withFileTypes: true });
    for (const entry of entries) if (entry.isDirectory()) dirs.push(`${group}/${entry.name}`);
  }
  const packages: WorkspacePackage[] = [];
  for (const dir of dirs.sort()) {
    const manifest = JSON.parse(
      await readFile(path.join(root, dir, 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    const importsOf = async (folder: string): Promise<string[]> => {
      const imports = new Set<string>();
      for (const file of await sourceFiles(path.join(root, dir, folder))) {
        for (const match of (await readFile(file, 'utf8')).matchAll(importPattern)) {
          if (match[1] !== undefined) imports.add(match[1]);
        }
      }
      return [...imports];
    };
    // bench/ keeps its scripts at the top level, not in src/.
    const sourceFolder = dir === 'bench' ? '.' : 'src';
    packages.push({
      name: String(manifest.name),
      dir,
      manifest,
      sourceImports: await importsOf(sourceFolder),
      testImports: await importsOf('test'),
    });
  }
  return packages;
}
