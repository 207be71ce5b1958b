import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkPackageGraph,
  checkPackaging,
  checkVersionGroup,
  findCycles,
  readWorkspacePackages,
  type WorkspacePackage,
} from '../package-graph.js';

const root = path.resolve(import.meta.dirname, '../..');

function library(name: string, dependencies: string[] = [], extra: object = {}): WorkspacePackage {
  return {
    name,
    dir: `packages/${name.replace('@claw/', '')}`,
    sourceImports: dependencies,
    manifest: {
      name,
      type: 'module',
      sideEffects: false,
      files: ['dist'],
      engines: { node: '>=20' },
      exports: {
        '.': { '@claw/source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js' },
        './package.json': './package.json',
      },
      dependencies: Object.fromEntries(dependencies.map((dependency) => [dependency, 'workspace:^'])),
      ...extra,
    },
  };
}

function appPackage(name: string, dir: string): WorkspacePackage & { manifest: Record<string, unknown> } {
  return { name, dir, sourceImports: [], manifest: { name, type: 'module', private: true } };
}

/** `@claw/cli` as published: bundled, so its workspace packages are devDependencies. */
function publishedApp(extra: object = {}): WorkspacePackage {
  return {
    name: '@claw/cli',
    dir: 'apps/cli',
    sourceImports: ['@claw/core'],
    manifest: {
      name: '@claw/cli',
      type: 'module',
      bin: { claw: './dist/main.js' },
      files: ['dist'],
      engines: { node: '>=20' },
      devDependencies: { '@claw/core': 'workspace:^' },
      ...extra,
    },
  };
}

describe('the real workspace', () => {
  it('has only downward edges, no cycles, declared imports, and well-formed packages', async () => {
    const packages = await readWorkspacePackages(root);
    expect(packages.map((pkg) => pkg.name).sort()).toEqual(
      [
        '@claw/a2a', '@claw/approval', '@claw/bench', '@claw/channel', '@claw/cli', '@claw/core', '@claw/engine', '@claw/eval',
        '@claw/mcp', '@claw/provider', '@claw/runtime', '@claw/sandbox', '@claw/server',
        '@claw/session-store', '@claw/session-store-pg', '@claw/testing', '@claw/web',
      ].sort(),
    );
    const changesetConfig: unknown = JSON.parse(
      await readFile(path.join(root, '.changeset/config.json'), 'utf8'),
    );
    const violations = [
      ...checkPackageGraph(packages),
      ...packages.flatMap(checkPackaging),
      ...checkVersionGroup(packages, changesetConfig),
    ];
    expect(violations.map((violation) => violation.message)).toEqual([]);
    // The checker really saw the edges (a reader that found none would pass vacuously).
    expect(packages.find((pkg) => pkg.name === '@claw/provider')?.sourceImports).toContain(
      '@claw/core',
    );
    // The channel sits on the runtime and under the apps (DESIGN.md's graph).
    expect(packages.find((pkg) => pkg.name === '@claw/channel')?.sourceImports).toContain(
      '@claw/runtime',
    );
  });
});

describe('checkPackageGraph on fixture graphs', () => {
  const base = [
    library('@claw/core'),
    library('@claw/approval', ['@claw/core']),
    library('@claw/engine', ['@claw/core', '@claw/approval']),
    library('@claw/mcp', ['@claw/core']),
  ];

  it('accepts a graph whose edges all point down', () => {
    expect(checkPackageGraph(base)).toEqual([]);
  });

  it('fails on an upward edge', () => {
    const graph = [...base.filter((pkg) => pkg.name !== '@claw/core'), library('@claw/core', ['@claw/engine'])];
    const violations = checkPackageGraph(graph);
    expect(violations).toContainEqual(
      expect.objectContaining({ package: '@claw/core', rule: 'upward-edge' }),
    );
    expect(violations.find((violation) => violation.rule === 'upward-edge')?.message).toContain(
      '@claw/core (layer 0) must not depend on @claw/engine (layer 3)',
    );
  });

  it('fails on a sideways edge (mcp must never import engine)', () => {
    const graph = [...base.filter((pkg) => pkg.name !== '@claw/mcp'), library('@claw/mcp', ['@claw/core', '@claw/engine'])];
    expect(checkPackageGraph(graph)).toEqual([
      expect.objectContaining({ package: '@claw/mcp', rule: 'sideways-edge' }),
    ]);
  });

  it('fails on a cycle and names it', () => {
    const layers = { '@claw/a': 0, '@claw/b': 1, '@claw/c': 2 };
    const graph = [
      library('@claw/a', ['@claw/c']),
      library('@claw/b', ['@claw/a']),
      library('@claw/c', ['@claw/b']),
    ];
    const violations = checkPackageGraph(graph, layers);
    expect(violations.filter((violation) => violation.rule === 'cycle')).toEqual([
      expect.objectContaining({ message: 'dependency cycle: @claw/a → @claw/c → @claw/b → @claw/a' }),
    ]);
  });

  it('counts devDependencies as edges', () => {
    const graph = [library('@claw/core', [], { devDependencies: { '@claw/engine': 'workspace:^' } }), ...base.slice(1)];
    expect(checkPackageGraph(graph).map((violation) => violation.rule)).toContain('upward-edge');
  });

  it('fails on a package missing from the layer table', () => {
    expect(checkPackageGraph([...base, library('@claw/new-thing', ['@claw/core'])])).toEqual([
      expect.objectContaining({ package: '@claw/new-thing', rule: 'unknown-package' }),
    ]);
  });

  it('fails when src/ imports a package listed only as a devDependency', () => {
    const engine = library('@claw/engine', ['@claw/core'], { devDependencies: { '@claw/approval': 'workspace:^' } });
    engine.sourceImports.push('@claw/approval');
    expect(checkPackageGraph([base[0] as WorkspacePackage, base[1] as WorkspacePackage, engine])).toEqual([
      expect.objectContaining({ rule: 'undeclared-import', message: expect.stringContaining('only as a devDependency') as unknown }),
    ]);
  });

  it('fails when source imports a workspace package the manifest does not declare', () => {
    const sneaky = library('@claw/approval', ['@claw/core']);
    sneaky.sourceImports.push('@claw/sandbox');
    expect(checkPackageGraph([base[0] as WorkspacePackage, sneaky])).toEqual([
      expect.objectContaining({ rule: 'undeclared-import' }),
    ]);
  });
});

describe('findCycles', () => {
  it('finds none in a DAG and the self-loop in a one-node cycle', () => {
    expect(findCycles(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
    expect(findCycles(new Map([['a', ['a']]]))).toEqual([['a', 'a']]);
  });
});

describe('checkPackaging', () => {
  const rulesOf = (pkg: WorkspacePackage) =>
    checkPackaging(pkg).map((violation) => violation.message);

  it('accepts a well-formed library', () => {
    expect(rulesOf(library('@claw/core'))).toEqual([]);
  });

  it('fails a library without "type": "module"', () => {
    expect(rulesOf(library('@claw/core', [], { type: 'commonjs' }))).toEqual([
      '@claw/core: "type" must be "module" (ESM only)',
    ]);
  });

  it('fails a library without an exports map', () => {
    expect(rulesOf(library('@claw/core', [], { exports: undefined }))).toEqual([
      '@claw/core: an "exports" map is required',
    ]);
  });

  it('fails a library without "sideEffects": false', () => {
    expect(rulesOf(library('@claw/core', [], { sideEffects: true }))).toEqual([
      '@claw/core: "sideEffects" must be false',
    ]);
  });

  it('fails an export whose conditions are out of order', () => {
    const pkg = library('@claw/core', [], {
      exports: { '.': { import: './dist/index.js', types: './dist/index.d.ts', '@claw/source': './src/index.ts' }, './package.json': './package.json' },
    });
    expect(rulesOf(pkg)).toEqual(['@claw/core: export "." must list "types" first, then "import"']);
  });

  it('requires the unpublished apps to be private and libraries and published apps public', () => {
    const web: WorkspacePackage = { name: '@claw/web', dir: 'apps/web', sourceImports: [], manifest: { name: '@claw/web', type: 'module' } };
    expect(checkPackaging(web).map((violation) => violation.rule)).toEqual(['privacy']);
    expect(checkPackaging(library('@claw/core', [], { private: true })).map((violation) => violation.rule)).toEqual(['privacy']);
    expect(rulesOf(publishedApp({ private: true }))).toEqual(['@claw/cli is a published app and must not be private']);
  });

  it('accepts a published app that bundles the workspace (DIST-1)', () => {
    expect(rulesOf(publishedApp())).toEqual([]);
  });

  it('fails a published app without a command, files or engines', () => {
    expect(rulesOf(publishedApp({ bin: undefined, files: undefined, engines: undefined }))).toEqual([
      '@claw/cli: "bin" must name its command',
      '@claw/cli: "files" must list "dist"',
      '@claw/cli: "engines.node" must be set',
    ]);
  });

  it('fails a published app that would install workspace packages beside itself', () => {
    expect(rulesOf(publishedApp({ dependencies: { '@claw/core': 'workspace:^', ws: '^8.0.0' } }))).toEqual([
      '@claw/cli: it is bundled: list @claw/core under "devDependencies", not "dependencies"',
    ]);
  });
});

describe('checkPackageGraph on published apps', () => {
  it('lets a published app import what it lists as a devDependency (it is bundled), and no other app', () => {
    const cli = { ...appPackage('@claw/cli', 'apps/cli'), sourceImports: ['@claw/core'] };
    cli.manifest.devDependencies = { '@claw/core': 'workspace:^' };
    expect(checkPackageGraph([library('@claw/core'), cli])).toEqual([]);
    const bench = { ...appPackage('@claw/bench', 'bench'), sourceImports: ['@claw/core'] };
    bench.manifest.devDependencies = { '@claw/core': 'workspace:^' };
    expect(checkPackageGraph([library('@claw/core'), bench])).toEqual([
      expect.objectContaining({ package: '@claw/bench', rule: 'undeclared-import' }),
    ]);
  });
});

describe('checkVersionGroup', () => {
  it('fails when a published app is missing from the fixed group, or a private one is in it', () => {
    const web = appPackage('@claw/web', 'apps/web');
    const violations = checkVersionGroup([library('@claw/core'), publishedApp(), web], {
      fixed: [['@claw/core', '@claw/web']],
    });
    expect(violations[0]?.message).toContain('missing: @claw/cli; not published: @claw/web');
  });

  it('fails when a library is missing from the fixed group', () => {
    const violations = checkVersionGroup([library('@claw/core'), library('@claw/engine')], {
      fixed: [['@claw/core']],
    });
    expect(violations[0]?.message).toContain('missing: @claw/engine');
  });
});
