// claw-eval built for mutation testing (EVAL-7; `pnpm --filter @claw/eval mutate`): the same
// bundle as eval/tsup.config.ts (the app and each case), made from the tree it sits in, which is
// StrykerJS's copy of the repository with the engine's files instrumented. Run from that tree's
// root: `tsup --config eval/mutation/tsup.config.mjs`.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundledApp, englishOnlyZod } from '../../tools/app-bundle.ts';
import { workspaceSources } from './workspace-sources.mjs';

const at = (relative) => fileURLToPath(new URL(relative, import.meta.url));
const root = at('../../');
const cases = Object.fromEntries(
  readdirSync(at('../cases/'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => [`cases/${name.slice(0, -'.ts'.length)}`, at(`../cases/${name}`)]),
);

export default bundledApp({
  entry: { main: at('../src/main.ts'), ...cases },
  outDir: at('../dist'),
  clean: true,
  splitting: true,
  silent: true,
  esbuildPlugins: [
    englishOnlyZod,
    // Stryker's copy has no node_modules of its own while it is built: the configuration names
    // the project it was copied from (see eval/stryker.config.mjs).
    workspaceSources({ root, modulesFrom: process.env.CLAW_EVAL_MODULES_FROM ?? root }),
  ],
});
