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
// with them everything those modules import.
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
  clean: true,
  splitting: false,
  noExternal: [/./],
  esbuildPlugins: [appChunk],
  esbuildOptions(options) {
    options.conditions = ['@claw/source', 'module'];
  },
  // Some bundled packages are CommonJS and call require() for Node's own modules.
  banner: {
    js: "import { createRequire as __clawCreateRequire } from 'node:module'; const require = __clawCreateRequire(import.meta.url);",
  },
});
