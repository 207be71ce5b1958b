import { defineConfig } from 'tsup';
import { bundledApp, englishOnlyZod } from '../../tools/app-bundle.js';

// `claw-server` is bundled like `claw` (PERF-2, PERF-4; see `bundledApp`), so that Node reads a
// few files instead of hundreds and code nothing uses is left out. What is loaded on some paths
// only (PostgreSQL, MCP, A2A) stays in chunks of its own, loaded then.
export default defineConfig(bundledApp({
  entry: ['src/main.ts', 'src/app.ts'],
  clean: true,
  splitting: true,
  // Optional native add-ons that their packages load in a try/catch when installed.
  external: ['pg-native', 'bufferutil', 'utf-8-validate'],
  esbuildPlugins: [englishOnlyZod],
}));
