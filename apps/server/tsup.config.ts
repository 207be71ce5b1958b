import { defineConfig, type Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

// zod's classic API holds every locale (`z.locales`), half of zod's code; claw uses the English
// messages only (the default), so the bundle holds that one.
const englishOnlyZod: EsbuildPlugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

// `claw-server` is bundled like `claw` (PERF-2, PERF-4): the workspace packages from their
// sources (the "@claw/source" export condition) and third-party packages in the bundle, so that
// Node reads a few files instead of hundreds and code nothing uses is left out. What is loaded on
// some paths only (PostgreSQL, MCP, A2A) stays in chunks of its own, loaded then.
export default defineConfig({
  entry: ['src/main.ts', 'src/app.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  splitting: true,
  // Code reads `.name` (errors take their name from their class, openai's User-Agent from its
  // client's): bundling must not rename them.
  keepNames: true,
  noExternal: [/./],
  // Optional native add-ons that their packages load in a try/catch when installed.
  external: ['pg-native', 'bufferutil', 'utf-8-validate'],
  esbuildOptions(options) {
    options.conditions = ['@claw/source', 'module'];
  },
  // For a bundled CommonJS module that calls require(): ESM output has no require.
  banner: {
    js: "import { createRequire as __clawCreateRequire } from 'node:module'; const require = __clawCreateRequire(import.meta.url);",
  },
  esbuildPlugins: [englishOnlyZod],
});
