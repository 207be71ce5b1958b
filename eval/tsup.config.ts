import { readdirSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { bundledApp, englishOnlyZod } from '../tools/app-bundle.js';

// dist/main.js is the app; each case of cases/ is built to dist/cases/<name>.js, which the app
// loads at run time (adding a case is adding a file). The code they share goes to chunks of its
// own. Bundled like `claw` and `claw-server` (`bundledApp`): the workspace packages from their
// sources and third-party packages too, so that the published package needs nothing installed
// beside it (DIST-1).
const cases = Object.fromEntries(
  readdirSync(new URL('./cases/', import.meta.url))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [`cases/${name.slice(0, -'.ts'.length)}`, `cases/${name}`]),
);

export default defineConfig(bundledApp({
  entry: { main: 'src/main.ts', ...cases },
  clean: true,
  splitting: true,
  esbuildPlugins: [englishOnlyZod],
}));
