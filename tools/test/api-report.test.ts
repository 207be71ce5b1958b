// DIST-4, DIST-5: the public surface of every library entry point, read from its build
// (`dist/*.d.ts`, which the global setup builds), matches its committed API report
// (`packages/<name>/api/*.api.md`), and every top-level export of @claw/engine, @claw/runtime and
// @claw/channel has a doc comment. The check is scripts/api-report.mjs, the one `pnpm api:check`
// runs; the last tests show that it fails when an export is added or left undocumented.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

interface ApiEntryPoint {
  packageName: string;
  subpath: string;
  importName: string;
  dtsFile: string;
  reportFile: string;
}

interface ApiCheck {
  status: 'same' | 'changed' | 'missing' | 'created' | 'updated';
  failures: string[];
}

/** The plain-JavaScript script's exports, typed here (it has no declaration file). */
interface ApiReportScript {
  documentedPackages: string[];
  updateCommand: string;
  apiEntryPoints(): ApiEntryPoint[];
  createCompilerState(entries: ApiEntryPoint[]): unknown;
  checkApiReport(
    entry: ApiEntryPoint,
    options?: { dtsFile?: string; reportFile?: string; update?: boolean; compilerState?: unknown },
  ): ApiCheck;
  undocumentedExports(report: string): string[];
  lineDiff(before: string, after: string, limit?: number): string;
  stableReport(report: string): string;
}

const script = (await import(
  pathToFileURL(path.join(root, 'scripts/api-report.mjs')).href,
)) as ApiReportScript;
const entries = script.apiEntryPoints();
// API Extractor builds a TypeScript program per entry point: seconds each on a busy machine.
const timeout = 120_000;

describe('API reports (DIST-4)', () => {
  // One TypeScript program over every build, shared by the entry points' checks.
  let compilerState: unknown;
  beforeAll(() => {
    compilerState = script.createCompilerState(entries);
  }, timeout);

  it('cover every library package and each of its subpath entry points', () => {
    const names = entries.map((entry) => entry.importName);
    for (const name of [
      '@claw/core',
      '@claw/engine',
      '@claw/runtime',
      '@claw/channel',
      '@claw/channel/protocol',
      '@claw/session-store/testing',
      '@claw/testing/node',
    ]) {
      expect(names).toContain(name);
    }
    for (const app of ['@claw/cli', '@claw/server', '@claw/eval']) {
      expect(names.some((name) => name.startsWith(app))).toBe(false);
    }
  });

  it.each(entries.map((entry) => [entry.importName, entry] as const))(
    '%s matches its committed report',
    (_name, entry) => {
      const result = script.checkApiReport(entry, { compilerState });
      expect(result.failures, `${entry.importName}:\n${result.failures.join('\n\n')}`).toEqual([]);
      expect(result.status).toBe('same');
    },
    timeout,
  );
});

describe('the API report check', () => {
  let folder: string;
  const entryOf = (name: string): ApiEntryPoint => {
    const entry = entries.find((candidate) => candidate.importName === name);
    if (entry === undefined) throw new Error(`no entry point ${name}`);
    return entry;
  };
  /** A declaration file with everything the entry's build exports plus `extra`. */
  const withExtra = async (entry: ApiEntryPoint, extra: string): Promise<string> => {
    const file = path.join(folder, `${entry.importName.replaceAll(/[@/]/g, '_')}.d.ts`);
    const built = entry.dtsFile.replace(/\.d\.ts$/, '.js');
    await writeFile(file, `export * from ${JSON.stringify(built)};\n${extra}\n`);
    return file;
  };

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'claw-api-report-test-'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('fails, naming the entry point, the new export and the update command, when an export is added', async () => {
    const entry = entryOf('@claw/approval');
    const dtsFile = await withExtra(
      entry,
      '/** Added by the test: not in the committed report. */\nexport declare function addedExport(): void;',
    );
    const result = script.checkApiReport(entry, { dtsFile });
    expect(result.status).toBe('changed');
    const message = result.failures.join('\n');
    expect(message).toContain('@claw/approval');
    expect(message).toMatch(/\+\s+\d+: export function addedExport\(\): void;/);
    expect(message).toContain(script.updateCommand);
  }, timeout);

  it('fails when a report is missing', async () => {
    const entry = entryOf('@claw/approval');
    const result = script.checkApiReport(entry, { reportFile: path.join(folder, 'none.api.md') });
    expect(result.status).toBe('missing');
    expect(result.failures.join('\n')).toContain(script.updateCommand);
  }, timeout);

  it.each(['@claw/engine', '@claw/runtime', '@claw/channel'])(
    'fails when an export of %s has no doc comment (DIST-5)',
    async (name) => {
      expect(script.documentedPackages).toContain(name);
      const entry = entryOf(name);
      const dtsFile = await withExtra(entry, 'export declare function undocumentedExport(): void;');
      const result = script.checkApiReport(entry, { dtsFile });
      expect(result.failures.join('\n')).toMatch(/without a doc comment.*undocumentedExport/);
    },
    timeout,
  );

  it('finds undocumented top-level declarations in a report, not undocumented members', () => {
    const report = [
      '// @public',
      'export interface Documented {',
      '    // (undocumented)',
      '    member: string;',
      '}',
      '',
      '// @public (undocumented)',
      'export function bare(): void;',
      '',
      '// Warning: (ae-forgotten-export) The symbol "X" needs to be exported by the entry point index.d.ts',
      '//',
      '// @public (undocumented)',
      'export type Alias = X;',
      '',
      '// @public (undocumented)',
      'export const limit = 3;',
    ].join('\n');
    expect(script.undocumentedExports(report)).toEqual(['bare', 'Alias', 'limit']);
  });

  it('leaves out where in a build a warning was found (hashed chunk names, line numbers)', () => {
    const warning = 'The symbol "StoredToolResult" needs to be exported by the entry point index.d.ts';
    expect(script.stableReport(`// Warnings:\n//\n// dist/memory-session-log-BiTPYGht.d.ts:310:13 - (ae-forgotten-export) ${warning}\n`))
      .toBe(`// Warnings:\n//\n// Warning: (ae-forgotten-export) ${warning}\n`);
  });

  it('puts a zod enum\'s members in name order, which TypeScript prints in no fixed order', () => {
    const enumOf = (...names: string[]) => [
      'export const schema: z.ZodObject<{',
      '    approval: z.ZodOptional<z.ZodEnum<{',
      ...names.map((name) => `        ${name}: "${name}";`),
      '    }>>;',
      '    other: {',
      '        deny: "deny";',
      '        ask: "ask";',
      '    };',
      '}>;',
    ].join('\n');
    const sorted = script.stableReport(enumOf('ask', 'allow', 'deny'));
    expect(script.stableReport(enumOf('deny', 'ask', 'allow'))).toBe(sorted);
    // Only the enum's value map: the plain object type after it keeps its order (deny, ask).
    expect(sorted).toBe(enumOf('allow', 'ask', 'deny'));
    // A value added or renamed still shows.
    expect(script.stableReport(enumOf('ask', 'allow', 'never'))).not.toBe(sorted);
  });

  it('shows the changed lines of a report', () => {
    expect(script.lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n')).toBe(
      ['  -    2: b', '  +    2: B', '  +    4: d'].join('\n'),
    );
  });
});
