// What the server-load benchmark needs around the processes it measures: the fake model and
// claw-server started as child processes (and stopped by their pid), memory and CPU read from
// /proc (Linux), a WebSocket client of the channel protocol, and the kernel's view of a socket.
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { buildMain } from '../bare-loop.mjs';
import { statCpuMs } from '../proc-stat.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
// BENCH_SERVER_MAIN: another build of claw-server in the built one's place (a before/after).
export const serverMain =
  process.env.BENCH_SERVER_MAIN === undefined
    ? path.join(root, 'apps', 'server', 'dist', 'main.js')
    : buildMain(process.env.BENCH_SERVER_MAIN, 'BENCH_SERVER_MAIN');

/** Every child process started and not yet stopped, so that a failure or the guard stops them. */
const children = new Set();
/** Temporary folders to remove at the end. */
const folders = new Set();

/** Ends every child still running (by its pid) and removes the temporary folders. */
export async function cleanUp() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
  await Promise.all([...folders].map((folder) => rm(folder, { recursive: true, force: true })));
  folders.clear();
}

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Resolves once the child exited; after `ms` it is killed (SIGKILL) and then awaited. */
export async function stopChild(child, signal = 'SIGTERM', ms = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}

/** The first IPC message of `type` from a child; rejects if it exits first or after `ms`. */
export function message(child, type, ms = 60_000) {
  return new Promise((resolve, reject) => {
    const onMessage = (value) => {
      if (value?.type !== type) return;
      done();
      resolve(value);
    };
    const onExit = (code, signal) => {
      done();
      reject(new Error(`the ${child.spawnargs.at(1) ?? 'child'} process ended (${code ?? signal}) before ${type}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no ${type} message within ${ms} ms`));
    }, ms);
    const done = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** A bench script run as a child process of its own, with an IPC channel. */
export function forkScript(script, args, options = {}) {
  return track(
    fork(path.join(import.meta.dirname, script), args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      ...options,
    }),
  );
}

/** The fake model in its own process (model.mjs). */
export async function startModel(config) {
  const child = forkScript('model.mjs', [JSON.stringify(config)]);
  const { baseURL } = await message(child, 'ready');
  return {
    baseURL,
    pid: child.pid,
    /** Model requests since the last call. */
    count: async () => {
      const reply = message(child, 'count');
      child.send({ type: 'count' });
      return (await reply).requests;
    },
    stop: async () => {
      if (child.connected) child.send({ type: 'exit' });
      await stopChild(child, 'SIGTERM', 5000);
    },
  };
}

/** A fresh temporary folder (removed at the end). */
export async function tempFolder(prefix) {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  folders.add(folder);
  return folder;
}

/** A workspace with the files the tasks read: `file-0.txt` … (1,000 bytes each). */
export async function workspaceIn(folder, files) {
  const workDir = path.join(folder, 'workspace');
  await mkdir(workDir);
  for (let index = 0; index < files; index += 1) {
    await writeFile(path.join(workDir, `file-${index}.txt`), 'line of source code\n'.repeat(50));
  }
  return workDir;
}

/**
 * The built claw-server on 127.0.0.1 (ports chosen by the OS) in a fresh workspace, on the fake
 * model, with its defaults otherwise (file sessions, tool journal, audit log, traces; approval
 * `ask`: read_file is safe and never asks). Its token is given (CLAW_SERVER_TOKEN), one for each
 * server: so it is known without reading a file, also when servers share a workspace and with a
 * build to compare against. `workDir`: a workspace to share with other servers instead.
 */
/** Node options for every claw-server started (`BENCH_SERVER_NODE_ARGS`, space-separated). */
const serverNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '')
  .split(' ')
  .filter((arg) => arg !== '');

export async function startServer({
  baseURL, files, nodeArgs = [], args = [], workDir: shared, main = serverMain,
}) {
  const folder = await tempFolder('claw-bench-server-');
  const workDir = shared ?? (await workspaceIn(folder, files));
  const portFile = path.join(folder, 'ports.json');
  const token = randomBytes(32).toString('hex');
  const child = track(
    spawn(
      process.execPath,
      [
        ...nodeArgs, ...serverNodeArgs, main, '--workdir', workDir, '--tcp-port', '0', '--http-port', '0',
        '--port-file', portFile, '--shutdown-grace-ms', '1000', ...args,
      ],
      {
        cwd: folder,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? os.tmpdir(),
          OPENAI_BASE_URL: baseURL,
          OPENAI_API_KEY: 'bench',
          OPENAI_MODEL: 'bench-model',
          CLAW_SERVER_TOKEN: token,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text) => void (output += text));
  child.stderr.setEncoding('utf8').on('data', (text) => void (output += text));
  const deadline = Date.now() + 20_000;
  let ports;
  while (ports === undefined) {
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`claw-server did not start (exit ${child.exitCode}):\n${output}`);
    }
    ports = await readFile(portFile, 'utf8').then(JSON.parse, () => undefined);
    if (ports === undefined) await sleep(20);
  }
  return {
    pid: child.pid,
    http: ports.http,
    token,
    workDir,
    output: () => output,
    /** Ends it at once (a crash); resolves once it is gone. */
    kill: () => stopChild(child, 'SIGKILL', 5000),
    /** SIGTERM (it stops in order: tasks canceled after 1 s, sessions stored), then SIGKILL. */
    stop: async () => {
      await stopChild(child, 'SIGTERM', 15_000);
      await rm(folder, { recursive: true, force: true });
      folders.delete(folder);
    },
  };
}

/** VmRSS and VmHWM (peak RSS) of a process, in KiB, from /proc/<pid>/status. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

/**
 * CPU time (user + system) a process used so far, in ms, from /proc/<pid>/stat; with `thread`,
 * that thread's only (/proc/<pid>/task/<thread>/stat; a process's main thread has its pid).
 */
export function cpuMsOf(pid, thread) {
  return statCpuMs(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`);
}

/** The open-file limit this process (and its children) has: `ulimit -n`. */
export function openFileLimit() {
  try {
    const text = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    return text === 'unlimited' ? Infinity : Number(text);
  } catch {
    return Number.NaN;
  }
}

const tcpStates = {
  '01': 'ESTABLISHED', '02': 'SYN_SENT', '03': 'SYN_RECV', '04': 'FIN_WAIT1', '05': 'FIN_WAIT2',
  '06': 'TIME_WAIT', '07': 'CLOSE', '08': 'CLOSE_WAIT', '09': 'LAST_ACK', '0A': 'LISTEN',
  '0B': 'CLOSING',
};

/** The inspector of a server started with `--inspect`: a full GC, its memory. */
export async function inspector(server) {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(server.output())?.[1];
  if (url === undefined) throw new Error('the server printed no inspector address');
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let id = 0;
  const call = (method, params = {}) =>
    new Promise((resolve, reject) => {
      id += 1;
      const mine = id;
      const onMessage = (data) => {
        const reply = JSON.parse(data.toString());
        if (reply.id !== mine) return;
        ws.off('message', onMessage);
        if (reply.error !== undefined) reject(new Error(`${method}: ${reply.error.message}`));
        else resolve(reply.result);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id: mine, method, params }));
    });
  return {
    gc: async () => {
      await call('HeapProfiler.collectGarbage');
      await sleep(300);
    },
    /** What the server's JavaScript holds: V8 heap used plus memory outside it, in KiB. */
    heldKb: async () => {
      const { result } = await call('Runtime.evaluate', {
        expression: 'JSON.stringify(process.memoryUsage())',
        returnByValue: true,
      });
      const usage = JSON.parse(result.value);
      return (usage.heapUsed + usage.external) / 1024;
    },
    close: () => ws.close(),
  };
}

/**
 * The state of the server's end of a loopback TCP connection (server port → client port) and the
 * bytes in its send queue, from /proc/net/tcp; undefined once the kernel forgot it.
 */
export function serverSocket(serverPort, clientPort) {
  const hex = (port) => port.toString(16).toUpperCase().padStart(4, '0');
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, remote, state, queues] = line.trim().split(/\s+/);
      if (local?.endsWith(`:${hex(serverPort)}`) && remote?.endsWith(`:${hex(clientPort)}`)) {
        return { state: tcpStates[state] ?? state, sendQueue: parseInt(queues.split(':')[0], 16) };
      }
    }
  }
  return undefined;
}

/** The `type` of a server event, read from the front of its JSON (the field comes first). */
export const typeOf = (text) => /^\{"type":"([a-z_]+)"/.exec(text)?.[1];

/** Events that fail whatever a client waits for. */
const failures = new Set(['error', 'task_failed', 'task_canceled']);

/**
 * A WebSocket client of claw-server's `/ws` (the `ws` package, as any Node client: no Origin).
 * `onEvent(text, type, receivedAt)` sees every server event as it arrives (`receivedAt`: epoch
 * ms from the high-resolution clock); `next(type)` waits for the next event of a type.
 */
export class Client {
  constructor(ws, onEvent) {
    this.ws = ws;
    this.waiters = [];
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      const receivedAt = performance.timeOrigin + performance.now();
      const text = data.toString('utf8');
      const type = typeOf(text);
      onEvent?.(text, type, receivedAt);
      for (const waiter of [...this.waiters]) {
        if (waiter.type === type || failures.has(type)) waiter.settle(text, type);
      }
    });
  }

  static connect(port, onEvent) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false });
      ws.once('open', () => resolve(new Client(ws, onEvent)));
      ws.once('error', reject);
    });
  }

  send(message) {
    this.ws.send(JSON.stringify(message));
  }

  /** The next event of `type` (parsed); an `error`, `task_failed` or `task_canceled` rejects. */
  next(type, ms = 60_000) {
    return new Promise((resolve, reject) => {
      const waiter = {
        type,
        settle: (text, got) => {
          this.waiters = this.waiters.filter((other) => other !== waiter);
          clearTimeout(timer);
          if (got !== type) reject(new Error(`the server answered ${text}`));
          else resolve(JSON.parse(text));
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        reject(new Error(`no ${type} within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  /** `hello` with the token → `welcome`. */
  async hello(token) {
    const welcome = this.next('welcome');
    this.send({ type: 'hello', token, protocol: 1 });
    return welcome;
  }

  /** `open` (a new session) → `session_opened`; returns the session id. */
  async open() {
    const opened = this.next('session_opened');
    this.send({ type: 'open' });
    return (await opened).session_id;
  }

  terminate() {
    this.ws.terminate();
  }
}

/** Runs `task(index)` for 0…count-1, at most `limit` at once; resolves with the results. */
export async function inBatches(count, limit, task) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}
