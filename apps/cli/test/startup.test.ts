import { isBuiltin } from 'node:module';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ClawProcess } from './helpers.js';

interface Metafile {
  outputs: Record<string, {
    inputs: Record<string, unknown>;
    imports: Array<{ path: string; kind: string; external?: boolean }>;
  }>;
}

/** What the build says each bundle holds (tsup's metafile; the global setup builds it). */
async function metafile(): Promise<Metafile> {
  const file = fileURLToPath(new URL('../dist/metafile-esm.json', import.meta.url));
  return JSON.parse(await readFile(file, 'utf8')) as Metafile;
}

// PERF-2: `claw --version` and `--help` within 50 ms of a bare `node` start. The time itself is
// measured by bench/cli-overhead; this keeps the reason it can hold: the entry point is a small
// bundle that loads nothing but Node's own modules until a command needs the runtime.
describe('the start-up path of the built claw (PERF-2)', () => {
  it('main.js holds no third-party package and imports only Node modules, and app.js lazily', async () => {
    const main = (await metafile()).outputs['dist/main.js'];
    expect(main).toBeDefined();
    const bundled = Object.keys(main?.inputs ?? {});
    expect(bundled.filter((input) => input.includes('node_modules/'))).toEqual([]);
    expect(bundled).toContain('src/cli.ts');
    // Nothing of the runtime's heavy parts: the model client, tracing, sessions, the sandbox.
    for (const heavy of ['packages/runtime/src/factory.ts', 'packages/provider/src/openai-provider.ts', 'packages/sandbox/src/isolation/probe.ts', 'src/app.ts']) {
      expect(bundled.some((input) => input.endsWith(heavy)), heavy).toBe(false);
    }
    const imports = main?.imports ?? [];
    expect(imports.filter((entry) => entry.kind !== 'dynamic-import' && !isBuiltin(entry.path))).toEqual([]);
    expect(imports.filter((entry) => entry.kind === 'dynamic-import').map((entry) => entry.path)).toEqual(['./app.js']);
  });

  it('a usage error is answered by the light entry too, with the same message and status', async () => {
    const result = await ClawProcess.run(['--max-turns', '0', '-p', 'hi']);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('claw: --max-turns needs a whole number of at least 1, got "0"; e.g. --max-turns 10\n');
  });
});
