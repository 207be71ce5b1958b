import { defineConfig, type Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

// `claw` is bundled (PERF-2): one file per entry, the workspace packages taken from their sources
// (the "@claw/source" export condition) and third-party packages bundled too, so that Node
// resolves and reads a few files instead of hundreds, and statements nothing uses are dropped.
//
// Two bundles, no shared chunks: dist/main.js is what `claw --version`, `--help` and a usage
// error run, and holds only what reading the command line needs (it imports nothing heavy);
// dist/app.js is the rest (runtime, model client, tracing, sandbox, schemas), which main.js
// loads with `import('./app.js')` once the command is known to need it. With code splitting the
// modules both use (settings, errors) would land in a chunk that main.js loads at start, and
// with them everything those modules import. The few small modules both bundles hold (errors,
// the settings' defaults) are two copies: main.js hands app.js only plain data (the parsed
// command), never an object whose class app.js would check.
const appChunk: EsbuildPlugin = {
  name: 'app-chunk-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/app\.js$/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: './app.js', external: true } : undefined,
    );
  },
};

export default defineConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // dist/metafile-esm.json: what each bundle holds (a test keeps main.js light with it).
  metafile: true,
  clean: true,
  splitting: false,
  // Bundling renames clashing names (`Foo` becomes `Foo2`); keep `.name` as written, since code
  // reads it (errors take their name from their class, openai's User-Agent from its client's).
  keepNames: true,
  noExternal: [/./],
  esbuildPlugins: [appChunk],
  esbuildOptions(options) {
    // Workspace packages from source; "module" (esbuild's default, dropped once conditions are
    // set) picks the ES module builds of packages that have them, which tree-shaking can trim.
    options.conditions = ['@claw/source', 'module'];
  },
  // For a bundled CommonJS module that calls require() (none today): ESM output has no require.
  banner: {
    js: "import { createRequire as __clawCreateRequire } from 'node:module'; const require = __clawCreateRequire(import.meta.url);",
  },
});
