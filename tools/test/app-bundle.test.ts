import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { afterEach, describe, expect, it } from 'vitest';
import { bundledApp, renamedNamedClasses } from '../app-bundle.js';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** Bundles `files` (name → source; `entry.ts` is the entry) the way the apps are (`bundledApp`). */
async function bundle(files: Record<string, string>): Promise<{ code: string; file: string }> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'claw-bundle-'));
  folders.push(folder);
  for (const [name, source] of Object.entries(files)) {
    await writeFile(path.join(folder, name), source);
  }
  const outDir = path.join(folder, 'dist');
  await build(
    bundledApp({ entry: [path.join(folder, 'entry.ts')], outDir, config: false, silent: true }),
  );
  const file = path.join(outDir, 'entry.js');
  return { code: await readFile(file, 'utf8'), file };
}

describe('bundles without keepNames keep the names code reads (PERF-1)', () => {
  it('fails the build when bundling renamed an error class, naming it', async () => {
    const clash = bundle({
      'a.ts': 'export class TimeoutError extends Error {}\n',
      'b.ts': 'export class TimeoutError extends Error {}\n',
      'entry.ts':
        "import { TimeoutError as A } from './a.js';\nimport { TimeoutError as B } from './b.js';\n" +
        'console.log(new A().name, new B().name);\n',
    });
    await expect(clash).rejects.toThrow(/renamed TimeoutError \(now TimeoutError2\)/);
  });

  it('lets a bundle through whose renamed classes nobody reads the name of', async () => {
    const { code } = await bundle({
      'a.ts': 'export class Files { list() { return 1; } }\n',
      'b.ts': 'export class Files { list() { return 2; } }\n',
      'entry.ts':
        "import { Files as A } from './a.js';\nimport { Files as B } from './b.js';\n" +
        'console.log(new A().list() + new B().list());\n',
    });
    expect(code).toMatch(/Files2/);
  });

  it('finds renamed error classes and the names in its list in esbuild output', () => {
    const code = [
      'var ClawError = class extends Error {',
      '};',
      'var ClawError2 = class extends Error {',
      '};',
      'class OpenAI {',
      '}',
      'var OpenAI2 = class {',
      '};',
      'var Files = class {};',
      'var Files2 = class {};',
      'var SessionLogError3 = class extends ClawError2 {};',
      'function SessionLogError() {}',
      'var Retry2 = class extends Error {};',
    ].join('\n');
    expect(renamedNamedClasses(code)).toEqual([
      'ClawError (now ClawError2)',
      'OpenAI (now OpenAI2)',
      'SessionLogError (now SessionLogError3)',
    ]);
  });

  it('finds them in minified output too, where declarations share a line and a var', () => {
    const code =
      'var ClawError=class extends Error{},n=1,ClawError2=class extends Error{};' +
      'class OpenAI{}var OpenAI2=class{};var Files=class{},Files2=class{};' +
      'var SessionLogError3=class extends ClawError2{};function SessionLogError(){}' +
      'var Retry2=class extends Error{};let o={Retry:1};f(n,Retry2);' +
      // pg-protocol's DatabaseError sets its own name: its rename is let through.
      'var DatabaseError=p.DatabaseError;var DatabaseError2=class extends Error{};';
    expect(renamedNamedClasses(code)).toEqual([
      'ClawError (now ClawError2)',
      'OpenAI (now OpenAI2)',
      'SessionLogError (now SessionLogError3)',
    ]);
  });

  it('builds minified bundles: no indentation, and what runs keeps its class names', async () => {
    const { code, file } = await bundle({
      'entry.ts': 'export class ReadError extends Error {}\n' +
        'function show(value: number) {\n  return value + 1;\n}\n' +
        'console.log(new ReadError().constructor.name, show(1));\n',
    });
    expect(code).not.toMatch(/\n {2}/);
    const { stdout } = await promisify(execFile)(process.execPath, [file]);
    expect(stdout).toBe('ReadError 2\n');
  });
});
