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

/** Classes whose name code reads besides error classes: openai's User-Agent names its client. */
const namesRead = new Set(['OpenAI']);

/**
 * Renamed error classes whose constructor sets `name` itself, so the rename changes nothing:
 * `pg-protocol`'s `DatabaseError` (its `name` is the message's, e.g. `error`), renamed inside
 * its CommonJS wrapper next to the server's own import of it.
 */
const namesSetByTheClass = new Set(['DatabaseError']);

/**
 * The classes of bundled code that bundling renamed to avoid a clash (`Foo` became `Foo2`) and
 * whose name code reads: error classes (errors take their name from their class, `ClawError`)
 * and those in `namesRead`. `code` is the bundle's output (its files joined), minified or not:
 * a class is `class Foo2 …` or `Foo2 = class …` after `var`, a comma or a statement's start.
 * Whether `Foo` was a name of the bundle's own top level cannot be told in minified code, so a
 * `Foo` declared anywhere counts (a false alarm fails the build; a miss would ship the bug).
 */
export function renamedNamedClasses(code: string): string[] {
  const renamed: string[] = [];
  const classValue = String.raw`(?:^|[\n;,{}]|\bvar |\blet |\bconst )\s*([\w$]+) ?= ?class\b`;
  const classStatement = String.raw`\bclass (?!extends\b)([\w$]+)`;
  const parent = String.raw`(?: extends ([\w$.]+))?`;
  const declared = new RegExp(`(?:${classValue}|${classStatement})${parent}`, 'g');
  const names = new Set<string>();
  const classes: Array<{ name: string; parent: string | undefined }> = [];
  for (const match of code.matchAll(declared)) {
    const name = match[1] ?? match[2] ?? '';
    names.add(name);
    classes.push({ name, parent: match[3] });
  }
  const declaredAnywhere = (name: string): boolean => {
    if (names.has(name)) return true;
    const escaped = name.replaceAll('$', '\\$');
    return new RegExp(`(?:\\b(?:var|let|const|function) |,)${escaped}\\b(?! ?:)`).test(code);
  };
  for (const { name, parent } of classes) {
    const original = /^(.*?)\d+$/.exec(name)?.[1];
    if (original === undefined || original === '' || namesSetByTheClass.has(original)) continue;
    if (!declaredAnywhere(original)) continue;
    const isError = /Error\d*$/.test(parent ?? '') || /Error$/.test(original);
    if (isError || namesRead.has(original)) renamed.push(`${original} (now ${name})`);
  }
  return renamed;
}

/**
 * The bundles are built without esbuild's `keepNames`: its helper costs every function made at
 * run time a call (a turn of `claw -p` makes hundreds), and 5-7% of a turn went away without it
 * (PERF-1). A class then keeps its name unless bundling renamed it to avoid a clash; this fails
 * the build when that happened to a class whose name is read (see `renamedNamedClasses`).
 * `bundledApp` adds it to every app build.
 */
const namesKept: EsbuildPlugin = {
  name: 'class-names-kept',
  setup(build) {
    build.onEnd((result) => {
      // All output files at once: the class a renamed one clashed with may lie in another chunk.
      const code = (result.outputFiles ?? [])
        .filter((file) => file.path.endsWith('.js'))
        .map((file) => file.text)
        .join('\n');
      const renamed = renamedNamedClasses(code);
      if (renamed.length === 0) return undefined;
      return {
        errors: [{
          text:
            `bundling renamed ${renamed.join(', ')} to avoid a clash of names, and code reads ` +
            'that name (an error\'s name, a User-Agent). Rename one of the clashing classes.',
        }],
      };
    });
  },
};

const appBundleBase: Options = {
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  // No `keepNames` (see `namesKept`).
  keepNames: false,
  noExternal: [/./],
  esbuildOptions(options) {
    // Workspace packages from source; "module" (esbuild's default, dropped once conditions are
    // set) picks the ES module builds of packages that have them, which tree-shaking can trim.
    options.conditions = ['@claw/source', 'module'];
    // Minified, names kept: Node compiles less text before the first request (claw -p's start
    // to its first model request 0.946x the readable bundle's, PERF-2). Stack traces map back
    // to the sources through the source maps (`node --enable-source-maps`).
    options.minifyWhitespace = true;
    options.minifySyntax = true;
  },
  // For a bundled CommonJS module that calls require(): ESM output has no require.
  banner: {
    js: "import { createRequire as __clawCreateRequire } from 'node:module'; const require = __clawCreateRequire(import.meta.url);",
  },
};

/**
 * How the apps (`claw`, `claw-server`) are bundled (PERF-2): one file per entry, the workspace
 * packages taken from their sources (the "@claw/source" export condition) and third-party packages
 * bundled too, so that Node resolves and reads a few files instead of hundreds, and statements
 * nothing uses are dropped. `options` (entries, splitting, the app's own esbuild plugins) go on
 * top; the check that no class whose name is read was renamed (`namesKept`) runs in every build.
 */
export function bundledApp(options: Options): Options {
  return {
    ...appBundleBase,
    ...options,
    esbuildPlugins: [...(options.esbuildPlugins ?? []), namesKept],
  };
}
