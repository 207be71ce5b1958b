import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Tool, ToolProgress } from '@claw/core';
import {
  McpServers,
  parseMcpConfig,
  type McpServersOptions,
  type McpWarning,
  type SetTimer,
} from '../src/index.js';

const require = createRequire(import.meta.url);

/** The in-repo SDK test server (see fixtures/test-server.mjs). */
export const testServer = fileURLToPath(new URL('./fixtures/test-server.mjs', import.meta.url));
/** The real server-everything, served over Streamable HTTP on 127.0.0.1. */
export const everythingHttp = fileURLToPath(new URL('./fixtures/everything-http.mjs', import.meta.url));
/** A launcher that starts a server as its own child, as `npx` does (see fixtures/launcher.mjs). */
export const launcher = fileURLToPath(new URL('./fixtures/launcher.mjs', import.meta.url));

function binOf(name: string): string {
  const manifest = require.resolve(`${name}/package.json`);
  return path.join(path.dirname(manifest), 'dist', 'index.js');
}

/** The installed servers' entry points, run with `process.execPath` (never npx). */
export const everythingBin = binOf('@modelcontextprotocol/server-everything');
export const filesystemBin = binOf('@modelcontextprotocol/server-filesystem');

const folders = new Set<string>();
const children = new Set<ChildProcess>();
const opened = new Set<McpServers>();

export async function tempDir(prefix = 'claw-mcp-'): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  folders.add(folder);
  return folder;
}

/** Closes every `McpServers` made by `openServers`, kills fixture processes, removes temp dirs. */
export async function cleanUp(): Promise<void> {
  await Promise.allSettled([...opened].map((made) => made.close()));
  opened.clear();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await Promise.all([...children].map((child) => exited(child)));
  children.clear();
  await Promise.all([...folders].map((folder) => rm(folder, { recursive: true, force: true })));
  folders.clear();
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A fixture that serves HTTP: started with node, its port read from "listening <port>". */
export async function startHttpFixture(
  script: string,
  args: readonly string[] = [],
): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const match = /listening (\d+)/.exec(stdout);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before listening: ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

/**
 * Timers under the test's control: nothing fires until the test says so. Records every timer
 * started (start-up and call timeouts, reconnect delays).
 */
export class ManualTimers {
  readonly timers: Array<{ ms: number; callback: () => void; canceled: boolean; fired: boolean }> = [];

  readonly setTimer: SetTimer = (callback, ms) => {
    const timer = { ms, callback, canceled: false, fired: false };
    this.timers.push(timer);
    return () => {
      timer.canceled = true;
    };
  };

  /** The timers of `ms` still waiting. */
  waiting(ms: number) {
    return this.timers.filter((timer) => timer.ms === ms && !timer.canceled && !timer.fired);
  }

  /** Fires every waiting timer of `ms`; returns how many. */
  fire(ms: number): number {
    const due = this.waiting(ms);
    for (const timer of due) {
      timer.fired = true;
      timer.callback();
    }
    return due.length;
  }
}

/** Waits (polling) until `check` holds; fails with `what` after 15 s. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 15_000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface OpenedServers {
  servers: McpServers;
  warnings: McpWarning[];
}

/** `McpServers` for a config object (as `.claw/mcp.json` would hold it), closed by `cleanUp`. */
export function openServers(
  mcpServers: Record<string, unknown>,
  options: Partial<Omit<McpServersOptions, 'config'>> & { env?: Record<string, string> } = {},
): OpenedServers {
  const { env, ...rest } = options;
  const config = parseMcpConfig(JSON.stringify({ mcpServers }), {
    file: '.claw/mcp.json',
    env: env ?? {},
  });
  const warnings: McpWarning[] = [];
  const servers = new McpServers({
    workDir: os.tmpdir(),
    onWarning: (warning) => warnings.push(warning),
    ...rest,
    config,
  });
  servers.start();
  opened.add(servers);
  return { servers, warnings };
}

/** Runs a tool as the engine would, collecting its progress reports. */
export async function run(
  tool: Tool | undefined,
  args: Record<string, unknown>,
  options: { signal?: AbortSignal; progress?: ToolProgress[] } = {},
) {
  if (tool === undefined) throw new Error('no such tool');
  const result = await tool.execute(args, {
    signal: options.signal ?? new AbortController().signal,
    workDir: os.tmpdir(),
    onProgress: (progress) => options.progress?.push(progress),
  });
  return typeof result === 'string' ? { content: result, isError: false } : { isError: false, ...result };
}

/** The JSON lines a fixture logged with --log. */
export async function readLog(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}
