// DIST-1, DIST-3: the publishable packages as npm users get them. Every one is packed with pnpm
// (which turns `workspace:^` into version ranges and drops the "@claw/source" condition), checked
// by publint and by attw (ESM-only profile); the libraries are installed with npm into a project
// outside the workspace, where a consumer type-checks under `node16` and under `bundler` and
// runs; the three apps are installed with `npm i -g` into a temporary prefix, without a registry,
// and `claw`, `claw-server` and `claw-eval` run from an empty folder. The global setup builds
// everything packed here. It prints how long each step took.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Running, cleanUp, outputOf, run, tempFolder, type Finished } from './processes.js';

const root = path.resolve(import.meta.dirname, '../..');
const rootManifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
  packageManager: string;
  devDependencies: Record<string, string>;
};
const pnpm = ['-y', rootManifest.packageManager.split('+')[0] ?? 'pnpm'];
const bin = (name: string): string => path.join(root, 'node_modules', '.bin', name);
const apps = { '@claw/cli': 'claw', '@claw/server': 'claw-server', '@claw/eval': 'claw-eval' };

interface Packed {
  name: string;
  tarball: string;
  manifest: {
    name: string;
    private?: boolean;
    exports?: unknown;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    bin?: Record<string, string>;
  };
  files: string[];
}

/** Each step: its wall time and the CPU time of the processes it ran (seconds). */
const timings: Array<{ step: string; wall: number; cpu: number | undefined }> = [];
let packed: Packed[] = [];
let packs: string;
/** Answers 404 for every package: the @claw scope's registry while installing (see below). */
let noRegistry: Server;

async function timed<T>(step: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const cpuBefore = childCpuSeconds();
  try {
    return await work();
  } finally {
    const cpuAfter = childCpuSeconds();
    const cpu = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
    timings.push({ step, wall: (performance.now() - started) / 1000, cpu });
  }
}

/**
 * CPU seconds used by the child processes this process has waited for (Linux: cutime and cstime
 * of /proc/self/stat, in the usual 100 ticks a second): on a busy machine the wall time of a step
 * says little about its own cost.
 */
function childCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command name in parentheses: field 3 (state) onwards; cutime, cstime are 16, 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

/** A command that must succeed; fails the test with its output otherwise. */
async function succeed(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string | undefined>; ms?: number },
): Promise<Finished> {
  const result = await run(command, args, { env: process.env, ...options });
  expect(result.status, `${command} ${args.join(' ')}\n${outputOf(result)}`).toBe(0);
  return result;
}

/** `work` on each item, two at a time (each loads a compiler: more at once only wait longer). */
async function eachOf<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

/** The workspace's publishable packages (libraries and published apps): not private. */
async function publishable(): Promise<Array<{ name: string; dir: string }>> {
  const dirs = ['eval'];
  for (const group of ['packages', 'apps']) {
    for (const entry of await readdir(path.join(root, group), { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push(`${group}/${entry.name}`);
    }
  }
  const found: Array<{ name: string; dir: string }> = [];
  for (const dir of dirs) {
    const manifest = JSON.parse(await readFile(path.join(root, dir, 'package.json'), 'utf8')) as Packed['manifest'];
    if (manifest.private !== true) found.push({ name: manifest.name, dir });
  }
  return found;
}

beforeAll(async () => {
  packs = await tempFolder('claw-packs');
  const packages = await publishable();
  // One pnpm run packs them all (`pnpm pack` per package, each with its lifecycle scripts).
  await timed('pack', () => succeed('npx', [...pnpm, '--recursive', ...packages.flatMap((pkg) => ['--filter', pkg.name]), 'pack', '--pack-destination', packs], { cwd: root, ms: 120_000 }));
  const tarballs = (await readdir(packs)).filter((name) => name.endsWith('.tgz'));
  packed = await Promise.all(tarballs.map(async (name) => {
    const tarball = path.join(packs, name);
    const exec = promisify(execFile);
    const { stdout: list } = await exec('tar', ['-tzf', tarball]);
    const { stdout: manifest } = await exec('tar', ['-xzOf', tarball, 'package/package.json']);
    const parsed = JSON.parse(manifest) as Packed['manifest'];
    return { name: parsed.name, tarball, manifest: parsed, files: list.split('\n').filter(Boolean) };
  }));
  expect(packed.map((pkg) => pkg.name).sort()).toEqual(packages.map((pkg) => pkg.name).sort());
  noRegistry = createServer((_request, response) => {
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });
  await new Promise<void>((resolve) => noRegistry.listen(0, '127.0.0.1', resolve));
}, 150_000);

afterAll(async () => {
  await new Promise((resolve) => noRegistry?.close(resolve));
  await cleanUp();
  if (timings.length > 0) {
    const seconds = (value: number | undefined): string => value === undefined ? '?' : `${value.toFixed(1)}s`;
    const sum = (values: Array<number | undefined>): number | undefined => values.reduce<number | undefined>(
      (total, value) => total === undefined || value === undefined ? undefined : total + value,
      0,
    );
    const steps = timings.map(({ step, wall, cpu }) => `${step} ${seconds(wall)} (cpu ${seconds(cpu)})`);
    const wall = sum(timings.map((timing) => timing.wall));
    const cpu = sum(timings.map((timing) => timing.cpu));
    console.log(`packed packages: ${steps.join(', ')}; ${seconds(wall)} in all (cpu ${seconds(cpu)})`);
  }
});

const library = (pkg: Packed): boolean => !(pkg.name in apps);

describe('the packed packages', () => {
  it('are the 12 libraries and the 3 apps, with version ranges instead of workspace links', () => {
    expect(packed.filter(library)).toHaveLength(12);
    expect(packed.filter((pkg) => !library(pkg)).map((pkg) => pkg.name).sort()).toEqual(Object.keys(apps).sort());
    for (const pkg of packed) {
      const text = JSON.stringify(pkg.manifest);
      expect(text, pkg.name).not.toContain('workspace:');
      expect(text, pkg.name).not.toContain('@claw/source');
      expect(pkg.files.filter((file) => file.startsWith('package/src/')), pkg.name).toEqual([]);
    }
  });

  it('hold the libraries\' builds and types, and the apps\' bundles without anything to install', () => {
    for (const pkg of packed.filter(library)) {
      expect(pkg.files, pkg.name).toContain('package/dist/index.js');
      expect(pkg.files, pkg.name).toContain('package/dist/index.d.ts');
    }
    for (const pkg of packed.filter((candidate) => !library(candidate))) {
      expect(pkg.manifest.dependencies ?? {}, pkg.name).toEqual({});
      expect(pkg.manifest.bin, pkg.name).toEqual({ [apps[pkg.name as keyof typeof apps]]: './dist/main.js' });
      expect(pkg.files.filter((file) => file.endsWith('.map')), pkg.name).toEqual([]);
    }
    const server = packed.find((pkg) => pkg.name === '@claw/server');
    expect(server?.files).toContain('package/dist/console/index.html');
    expect(packed.find((pkg) => pkg.name === '@claw/eval')?.files).toContain('package/baselines/scripted.json');
  });

  it('pass publint (warnings count as failures)', async () => {
    const results = await timed('publint', () => eachOf(packed, async (pkg) => {
      const result = await run(bin('publint'), ['--level', 'warning', '--strict', pkg.tarball], { cwd: packs, env: process.env });
      return { pkg, result };
    }));
    for (const { pkg, result } of results) {
      expect(result.status, `publint ${pkg.name}\n${outputOf(result)}`).toBe(0);
      expect(result.stdout, pkg.name).toContain('All good!');
    }
  }, 120_000);

  // The apps are commands without types: attw would only say so.
  it('pass attw with the ESM-only profile (the libraries: the apps have no types)', async () => {
    const results = await timed('attw', () => eachOf(packed.filter(library), async (pkg) => {
      const result = await run(bin('attw'), ['--profile', 'esm-only', '--format', 'table-flipped', '--no-color', pkg.tarball], { cwd: packs, env: process.env });
      return { pkg, result };
    }));
    for (const { pkg, result } of results) {
      expect(result.status, `attw ${pkg.name}\n${outputOf(result)}`).toBe(0);
      // The exit status says whether a problem outside the ignored resolutions was found; the
      // table, that the types were found and resolve under node16 (ESM) and bundler.
      expect(result.stdout, pkg.name).toMatch(/"@claw\/[a-z0-9-]+"\s+│ 🟢 \(ESM\)\s+│ 🟢/);
    }
  }, 120_000);
});

/**
 * A program of a user who installed the libraries: every entry point but the test helpers that
 * need vitest (`@claw/session-store/testing`, `@claw/session-store-pg/testing`); a task through the
 * engine with the OpenAI provider (the real `openai` client, over loopback) and a tool of its own;
 * a task through `RuntimeFactory` with the built-in tools and a session file.
 */
const consumer = `import { createDelegateTool } from '@claw/a2a';
import { clawAgentCard } from '@claw/a2a/server';
import { Gate, MemoryGrantStore, staticHandler } from '@claw/approval';
import { ChannelConnection } from '@claw/channel';
import { parseClientMessage, protocolVersion } from '@claw/channel/protocol';
import { defineTool } from '@claw/core';
import { Engine } from '@claw/engine';
import { loadMcpConfig } from '@claw/mcp';
import { OpenAIProvider } from '@claw/provider';
import { RuntimeFactory, resolveSettings } from '@claw/runtime';
import { resolveWithinWorkspace } from '@claw/sandbox';
import { MemorySession } from '@claw/session-store';
import { PgSessionLog } from '@claw/session-store-pg';
import { ScriptedProvider } from '@claw/testing';
import { createDemoModel } from '@claw/testing/demo';
import { FakeOpenAIServer } from '@claw/testing/node';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

const loaded = [createDelegateTool, clawAgentCard, ChannelConnection, loadMcpConfig, resolveWithinWorkspace, PgSessionLog, createDemoModel];
console.log(\`entry points: \${loaded.filter((value) => typeof value === 'function').length} of \${loaded.length}\`);
const hello = parseClientMessage(JSON.stringify({ type: 'hello', token: 't', protocol: protocolVersion }));
console.log(\`channel: \${hello.ok ? hello.message.type : hello.code}\`);

const echo = defineTool({
  name: 'echo',
  description: 'Says the text back.',
  risk: 'safe',
  schema: z.object({ text: z.string() }),
  execute: async ({ text }) => \`echo: \${text}\`,
});
const model = await FakeOpenAIServer.start({
  turns: [{ toolCalls: [{ name: 'echo', arguments: '{"text":"hi"}' }] }, { text: 'done' }],
});
try {
  const engine = new Engine({
    provider: new OpenAIProvider({ apiKey: 'key', model: 'fake-model', baseURL: model.baseURL }),
    tools: [echo],
    gate: new Gate({ handler: staticHandler('deny'), grants: new MemoryGrantStore() }),
  });
  const result = await engine.run('say hi', { session: new MemorySession({ workDir: process.cwd() }) });
  const toolResult = model.requests[1]?.body as { messages: Array<{ content: string }> };
  console.log(\`engine: \${result.status} "\${result.finalText}" after \${result.turns} calls; the tool said "\${toolResult.messages.at(-1)?.content}"\`);
} finally {
  await model.close();
}

const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-consumer-'));
try {
  await writeFile(path.join(workDir, 'README.md'), 'hello from the README\\n');
  const settings = await resolveSettings({ workDir, env: { HOME: workDir } });
  const provider = new ScriptedProvider([
    { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] },
    (request) => ({ text: \`it says: \${request.messages.at(-1)?.content.includes('hello from the README')}\` }),
  ]);
  const factory = new RuntimeFactory({ settings, provider });
  const runtime = await factory.createRuntime({ workDir, sessionId: 'consumer' });
  const result = await runtime.start('read the README').wait();
  await runtime.close();
  await factory.close();
  const sessions = await readdir(path.join(workDir, '.claw', 'sessions'));
  console.log(\`runtime: \${result.status} "\${result.finalText}"; sessions: \${sessions.join(', ')}\`);
} finally {
  await rm(workDir, { recursive: true, force: true });
}
`;

/** The compiler options both checks share: a strict user's. */
const strict = {
  target: 'ES2022',
  lib: ['ES2023'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  esModuleInterop: true,
};

describe('the libraries installed with npm outside the workspace', () => {
  it('type-check a consumer under node16 and under bundler, and run it', async () => {
    const project = await tempFolder('claw-consumer');
    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'claw-consumer', private: true, type: 'module' }));
    // Third-party packages come from the registry, the @claw ones only from the tarballs: for the
    // @claw scope npm asks a loopback server that has none, so a package of that name published
    // by anyone else can never be installed here.
    const { port } = noRegistry.address() as AddressInfo;
    await writeFile(path.join(project, '.npmrc'), `@claw:registry=http://127.0.0.1:${port}/\n`);
    const tarballs = packed.filter(library).map((pkg) => pkg.tarball);
    const types = `@types/node@${rootManifest.devDependencies['@types/node']}`;
    await timed('npm install (libraries)', () => succeed('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, types, 'zod@^4.6.7'], { cwd: project, ms: 300_000 }));
    const installed = await readdir(path.join(project, 'node_modules', '@claw'));
    expect(installed.sort()).toEqual(packed.filter(library).map((pkg) => pkg.name.slice('@claw/'.length)).sort());

    await writeFile(path.join(project, 'consumer.ts'), consumer);
    // Under node16 the declarations are checked too (a type they use from a package the user
    // does not get, as `pg`'s were, fails here and nowhere else); under bundler the resolution
    // and the consumer (checking every declaration twice costs seconds for nothing).
    await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { ...strict, module: 'node16', moduleResolution: 'node16', skipLibCheck: false, outDir: 'out', rootDir: '.' },
      files: ['consumer.ts'],
    }));
    await writeFile(path.join(project, 'tsconfig.bundler.json'), JSON.stringify({
      compilerOptions: { ...strict, module: 'preserve', moduleResolution: 'bundler', skipLibCheck: true, noEmit: true },
      files: ['consumer.ts'],
    }));
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    await timed('tsc node16', () => typeCheck(tsc, project, 'tsconfig.json'));
    await timed('tsc bundler', () => typeCheck(tsc, project, 'tsconfig.bundler.json'));
    const result = await timed('consumer run', () => succeed(process.execPath, ['out/consumer.js'], { cwd: project, ms: 60_000 }));
    expect(result.stdout).toBe(
      'entry points: 7 of 7\n' +
      'channel: hello\n' +
      'engine: completed "done" after 2 calls; the tool said "echo: hi"\n' +
      'runtime: completed "it says: true"; sessions: consumer.jsonl\n',
    );
  }, 420_000);
});

/**
 * Runs tsc; fails on an error in the consumer or in a @claw package's declarations. Errors inside
 * third-party declarations are not ours to fix and are left out (`skipLibCheck` would hide ours).
 */
async function typeCheck(tsc: string, project: string, config: string): Promise<void> {
  const result = await run(process.execPath, [tsc, '-p', config, '--pretty', 'false'], { cwd: project, env: process.env, ms: 120_000 });
  const errors = `${result.stdout}${result.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line));
  const ours = errors.filter((line) => !line.startsWith('node_modules/') || line.startsWith('node_modules/@claw/'));
  expect(ours, `tsc -p ${config}\n${outputOf(result)}`).toEqual([]);
  if (errors.length === 0) expect(result.status, outputOf(result)).toBe(0);
}

describe('the apps installed with npm i -g', () => {
  it('put claw, claw-server and claw-eval on PATH; each works from an empty folder', async () => {
    const prefix = await tempFolder('claw-global');
    const tarballs = packed.filter((pkg) => !library(pkg)).map((pkg) => pkg.tarball);
    // --offline: the bundled apps need nothing from any registry.
    await timed('npm i -g (apps)', () => succeed('npm', ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs], { cwd: prefix, ms: 120_000 }));
    const bins = path.join(prefix, 'bin');
    expect((await readdir(bins)).sort()).toEqual(['claw', 'claw-eval', 'claw-server']);

    const home = await tempFolder('claw-global-home');
    const tmp = path.join(home, 'tmp');
    await mkdir(tmp);
    const empty = await tempFolder('claw-empty');
    // Only the installed commands, Node and the system's own folders; a home of its own.
    const env = {
      PATH: [bins, path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
      HOME: home,
      TMPDIR: tmp,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_STATE_HOME: path.join(home, 'state'),
    };
    const command = (name: string): string => path.join(bins, name);
    await timed('apps run', async () => {
      const version = await succeed(command('claw'), ['--version'], { cwd: empty, env });
      expect(version.stdout).toBe('0.1.0\n');

      const demo = await succeed(command('claw'), ['demo', '--approval', 'allow'], { cwd: empty, env, ms: 60_000 });
      expect(demo.stdout).toContain('scripted demo model');
      expect(demo.stdout).toMatch(/read_file README\.md[\s\S]*write_file NOTES\.md[\s\S]*edit_file NOTES\.md/);

      const evalRun = await succeed(command('claw-eval'), ['--tag', 'seed', '--quiet'], { cwd: empty, env, ms: 60_000 });
      expect(`${evalRun.stdout}${evalRun.stderr}`).toMatch(/6 case\(s\), 1 run\(s\) each: 6 passed, 0 failed/);
      expect((await readdir(path.join(empty, 'eval-results'))).sort()).toEqual(['report.html', 'results.json', 'results.junit.xml']);

      await serverDemo(command('claw-server'), empty, env);
    });
  }, 300_000);
});

/** `claw-server --demo`: it listens, is healthy, and serves the web console it carries. */
async function serverDemo(command: string, cwd: string, env: Record<string, string>): Promise<void> {
  const portFile = path.join(cwd, 'ports.json');
  const server = new Running(command, ['--demo', '--tcp-port', '0', '--http-port', '0', '--port-file', portFile], {
    cwd,
    env: { ...env, CLAW_SERVER_TOKEN: 'packed-test-token-0123456789' },
  });
  const deadline = Date.now() + 20_000;
  let ports: { http: number } | undefined;
  while (ports === undefined && Date.now() < deadline && server.isRunning) {
    const text = await readFile(portFile, 'utf8').catch(() => undefined);
    if (text === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    else ports = JSON.parse(text) as { http: number };
  }
  expect(ports, `claw-server did not listen\n${server.stdout}\n${server.stderr}`).toBeDefined();
  const base = `http://127.0.0.1:${ports?.http}`;
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  const page = await fetch(`${base}/`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  expect(script, html).toBeDefined();
  expect((await fetch(`${base}${script}`)).status).toBe(200);
  server.child.kill('SIGTERM');
  const stopped = await server.finish(20_000);
  expect(stopped.status, outputOf(stopped)).toBe(0);
}
