import { readdirSync } from 'node:fs';
import { defineConfig } from 'tsup';

// dist/main.js is the app; each case of cases/ is built to dist/cases/<name>.js, which the app
// loads at run time (adding a case is adding a file). The code they share goes to chunks of its
// own; the workspace packages and third-party modules stay external (node_modules).
const cases = Object.fromEntries(
  readdirSync(new URL('./cases/', import.meta.url))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [`cases/${name.slice(0, -'.ts'.length)}`, `cases/${name}`]),
);

export default defineConfig({
  entry: { main: 'src/main.ts', ...cases },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  splitting: true,
});
