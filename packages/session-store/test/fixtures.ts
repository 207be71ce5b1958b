import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import nodePath from 'node:path';
import type { AssistantMessage, Message, ToolCall, ToolMessage } from '@claw/core';
import {
  FileSessionManager,
  nodeSessionFileSystem,
  type FileSessionManagerOptions,
  type SessionFileHandle,
  type SessionFileSystem,
} from '../src/index.js';

/** Temp folders made by `tempDir`, removed by `removeTempDirs` (call it in afterEach). */
const made: string[] = [];

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(nodePath.join(tmpdir(), 'claw-session-store-'));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

export function sessionFile(workDir: string, id: string): string {
  return nodePath.join(workDir, '.claw', 'sessions', `${id}.jsonl`);
}

export async function fileLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text.split('\n').filter((line) => line !== '');
}

/** Every file and folder under `dir`, relative, sorted. */
export async function treeOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String).sort();
}

/** A clock the test moves by hand; every reading advances it by one second. */
export class ManualClock {
  private current: number;

  constructor(start = '2030-01-01T00:00:00.000Z') {
    this.current = Date.parse(start);
  }

  readonly now = (): Date => {
    const reading = new Date(this.current);
    this.current += 1000;
    return reading;
  };
}

export const user = (content: string): Message => ({ role: 'user', content });

export function call(id: string, name = 'bash', args: unknown = { command: 'ls' }): ToolCall {
  return { id, name, arguments: JSON.stringify(args) };
}

export function assistant(content: string, calls?: ToolCall[]): AssistantMessage {
  return calls === undefined ? { role: 'assistant', content } : { role: 'assistant', content, toolCalls: calls };
}

export function observation(toolCallId: string, content = `result of ${toolCallId}`): ToolMessage {
  return { role: 'tool', toolCallId, content };
}

/** A record line as the file format defines it (for hand-made files). */
export function sealLine(record: Record<string, unknown>): string {
  const body = JSON.stringify(record);
  const sum = createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 8);
  return `${body.slice(0, -1)},"sum":"${sum}"}\n`;
}

export type Operation = 'readFile' | 'readdir' | 'mkdir' | 'open' | 'write' | 'sync' | 'close' | 'rename' | 'link' | 'unlink';

/** One call made through a `RecordingFileSystem`. */
export interface OperationEntry {
  operation: Operation;
  path: string;
  flags?: string | number;
}

/**
 * Node's file system with a log of every operation, and faults on demand: `failWhen` returns an
 * error to throw instead of doing the operation. With `crash()` every later operation fails too, as
 * if the process had died (nothing is cleaned up). `writeHalf` makes a failing write put the first
 * half of its data on disk first.
 */
export class RecordingFileSystem implements SessionFileSystem {
  readonly log: OperationEntry[] = [];
  failWhen: (entry: OperationEntry) => Error | undefined = () => undefined;
  writeHalf = false;
  private dead = false;

  crash(): void {
    this.dead = true;
  }

  writes(): OperationEntry[] {
    return this.log.filter((entry) => !['readFile', 'readdir'].includes(entry.operation));
  }

  private check(entry: OperationEntry): void {
    this.log.push(entry);
    if (this.dead) throw errno('EIO', `process is dead (${entry.operation})`);
    const error = this.failWhen(entry);
    if (error !== undefined) throw error;
  }

  async readFile(path: string, encoding: 'utf8'): Promise<string> {
    this.check({ operation: 'readFile', path });
    return nodeSessionFileSystem.readFile(path, encoding);
  }

  async readdir(path: string): Promise<string[]> {
    this.check({ operation: 'readdir', path });
    return nodeSessionFileSystem.readdir(path);
  }

  async mkdir(path: string, options: { recursive: true }): Promise<unknown> {
    this.check({ operation: 'mkdir', path });
    return nodeSessionFileSystem.mkdir(path, options);
  }

  async open(path: string, flags: string | number, mode?: number): Promise<SessionFileHandle> {
    this.check({ operation: 'open', path, flags });
    const handle = await nodeSessionFileSystem.open(path, flags, mode);
    const appendSync = handle.appendSync === undefined
      ? undefined
      : (data: string) => handle.appendSync?.(data);
    return {
      // The store appends through this when it is there (as on Node's file system).
      ...(appendSync === undefined
        ? {}
        : {
            appendSync: (data: string) => {
              try {
                this.check({ operation: 'write', path });
              } catch (error) {
                if (this.writeHalf) appendSync(data.slice(0, Math.floor(data.length / 2)));
                throw error;
              }
              appendSync(data);
            },
          }),
      writeFile: async (data, encoding) => {
        try {
          this.check({ operation: 'write', path });
        } catch (error) {
          if (this.writeHalf) await handle.writeFile(data.slice(0, Math.floor(data.length / 2)), encoding);
          throw error;
        }
        await handle.writeFile(data, encoding);
      },
      sync: async () => {
        this.check({ operation: 'sync', path });
        await handle.sync();
      },
      close: async () => {
        // A dead process's files are closed by the OS.
        await handle.close();
        this.check({ operation: 'close', path });
      },
    };
  }

  async rename(from: string, to: string): Promise<void> {
    this.check({ operation: 'rename', path: to });
    return nodeSessionFileSystem.rename(from, to);
  }

  async link(from: string, to: string): Promise<void> {
    this.check({ operation: 'link', path: to });
    return nodeSessionFileSystem.link(from, to);
  }

  async unlink(path: string): Promise<void> {
    this.check({ operation: 'unlink', path });
    return nodeSessionFileSystem.unlink(path);
  }
}

export function errno(code: string, message = code): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** A pid no process has (above any pid_max), as the pid of a process that died. */
export const deadPid = 2_147_483_646;

/**
 * Makes every session lock of `workDir` look like its process died (as after kill -9), so that
 * the next open takes it over, the way a new process would.
 */
export async function abandonLocks(workDir: string): Promise<void> {
  const folder = nodePath.join(workDir, '.claw', 'sessions');
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names.filter((entry) => entry.endsWith('.lock'))) {
    const file = nodePath.join(folder, name);
    const holder = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...holder, pid: deadPid, processStart: undefined }));
  }
}

/**
 * A manager as the next process would make it: whoever held the workspace's sessions before is
 * gone (crashed or ended without closing), so their locks are taken over.
 */
export async function newProcess(options: FileSessionManagerOptions): Promise<FileSessionManager> {
  await abandonLocks(options.workDir);
  return new FileSessionManager(options);
}
