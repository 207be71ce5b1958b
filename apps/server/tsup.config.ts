import { cp, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { bundledApp, englishOnlyZod } from '../../tools/app-bundle.js';

// The web console's build (apps/web, built first: see turbo.json here) goes into dist/console/,
// so that the published package serves it (DIST-1); the server looks there first.
const consoleBuild = fileURLToPath(new URL('../web/dist/', import.meta.url));
const consoleCopy = fileURLToPath(new URL('./dist/console/', import.meta.url));

async function copyConsole(): Promise<void> {
  const built = await stat(path.join(consoleBuild, 'index.html')).catch(() => undefined);
  if (built === undefined) {
    throw new Error(
      `the web console is not built (${path.join(consoleBuild, 'index.html')} is missing): build ` +
      'it first (npx -y pnpm@12.4.2 exec turbo run build --filter=@claw/server...)',
    );
  }
  await cp(consoleBuild, consoleCopy, { recursive: true });
}

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
  onSuccess: copyConsole,
}));
