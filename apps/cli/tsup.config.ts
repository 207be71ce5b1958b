import { defineConfig, type Options } from 'tsup';
import { bundledApp, englishOnlyZod } from '../../tools/app-bundle.js';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

// `claw` is bundled (PERF-2): one file per entry, the workspace packages taken from their sources
// (the "@claw/source" export condition) and third-party packages bundled too, so that Node
// resolves and reads a few files instead of hundreds, and statements nothing uses are dropped.
//
// Two builds: dist/main.js is what `claw --version`, `--help` and a usage error run, and holds
// only what reading the command line needs (it imports nothing heavy); dist/app.js is the rest
// (runtime, model client, tracing, sandbox, schemas), which main.js loads with
// `import('./app.js')` once the command is known to need it. main.js is built without code
// splitting: with it the modules both use (settings, errors) would land in a chunk that main.js
// loads at start, and with them everything those modules import. The few small modules both
// hold (errors, the settings' defaults) are two copies: main.js hands app.js only plain data (the
// parsed command), never an object whose class app.js would check. app.js is built with code
// splitting (below).
const appChunk: EsbuildPlugin = {
  name: 'app-chunk-external',
  setup(build) {
    build.onResolve({ filter: /^\.\/app\.js$/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: './app.js', external: true } : undefined,
    );
  },
};

// Both bundles take the apps' bundle options (`bundledApp`). `dist` is emptied by the build
// script: the two builds run side by side.
export default defineConfig([
  bundledApp({
    clean: false,
    entry: ['src/main.ts'],
    // dist/metafile-esm.json: what main.js holds (a test keeps it light with it).
    metafile: true,
    splitting: false,
    esbuildPlugins: [appChunk],
  }),
  bundledApp({
    clean: false,
    entry: ['src/app.ts'],
    // What app.js imports only on some paths (`import('@claw/mcp')` when a workspace has
    // .claw/mcp.json, `import('@claw/a2a')` with .claw/a2a.json: the protocol SDKs, a third of
    // the code) is a chunk of its own, loaded then; what both use lies in a chunk app.js loads
    // at once, so every module exists once (its classes too).
    splitting: true,
    esbuildPlugins: [englishOnlyZod],
  }),
]);
