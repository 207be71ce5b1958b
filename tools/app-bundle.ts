import type { Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

/**
 * zod's classic API holds every locale (`z.locales`), half of zod's code, all of it parsed at
 * start-up; claw uses the English messages only (the default), so a bundle holds that one.
 */
export const englishOnlyZod: EsbuildPlugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

/**
 * How the apps (`claw`, `claw-server`) are bundled (PERF-2): one file per entry, the workspace
 * packages taken from their sources (the "@claw/source" export condition) and third-party packages
 * bundled too, so that Node resolves and reads a few files instead of hundreds, and statements
 * nothing uses are dropped.
 */
export const bundledApp: Options = {
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // Bundling renames clashing names (`Foo` becomes `Foo2`); keep `.name` as written, since code
  // reads it (errors take their name from their class, openai's User-Agent from its client's).
  keepNames: true,
  noExternal: [/./],
  esbuildOptions(options) {
    // Workspace packages from source; "module" (esbuild's default, dropped once conditions are
    // set) picks the ES module builds of packages that have them, which tree-shaking can trim.
    options.conditions = ['@claw/source', 'module'];
  },
  // For a bundled CommonJS module that calls require(): ESM output has no require.
  banner: {
    js: "import { createRequire as __clawCreateRequire } from 'node:module'; const require = __clawCreateRequire(import.meta.url);",
  },
};
