// The processes of the soak: claw-server instances (the built apps/server/dist/main.js, or
// BENCH_SERVER_MAIN) and the fake model, each a child process that is stopped, killed, frozen
// and thawed by its pid only. Every instance writes its whole output to a log file in the run's
// folder (the evidence when a check fails) and keeps the tail in memory.
import { fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { serverMain } from '../server-load/harness.mjs';

/** Every child process started and not yet gone: `stopAll` kills what is left, by pid. */
const children = new Set();

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

const running = (child) =>
  child !== undefined && child.exitCode === null && child.signalCode === null;

/** What else must go when the soak is stopped from outside (the PostgreSQL cluster). */
const cleanups = new Set();

/** Runs `cleanUp` if the soak is stopped from outside before the returned function removes it. */
export function onAbort(cleanUp) {
  cleanups.add(cleanUp);
  return () => cleanups.delete(cleanUp);
}

/** Stopped from outside (SIGINT, SIGTERM): every child killed, every cleanup run. */
export async function abortAll() {
  await stopAll();
  await Promise.allSettled([...cleanups].map((cleanUp) => cleanUp()));
  cleanups.clear();
}

/** Kills (SIGCONT first, for a frozen one) every child process still running. */
export async function stopAll() {
  const left = [...children].filter(running);
  await Promise.all(left.map(async (child) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(child.pid, 'SIGCONT');
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
    await exited;
  }));
}

/** Resolves once the child exited; after `ms` it gets SIGKILL. */
async function stopChild(child, signal, ms) {
  if (!running(child)) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await exited;
  clearTimeout(timer);
}

/** The fake model (model.mjs) in its own process; `count()` is its requests so far. */
export async function startModel(config) {
  const child = track(fork(path.join(import.meta.dirname, 'model.mjs'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  }));
  const reply = (type) => new Promise((resolve, reject) => {
    const onMessage = (value) => {
      if (value?.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(value);
    };
    const onExit = (code, signal) => {
      child.off('message', onMessage);
      reject(new Error(`the fake model ended (${code ?? signal}) before ${type}`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
  const { baseURL } = await reply('ready');
  return {
    baseURL,
    count: async () => {
      const answer = reply('count');
      child.send({ type: 'count' });
      return (await answer).requests;
    },
    stop: async () => {
      if (child.connected) child.send({ type: 'exit' });
      await stopChild(child, 'SIGTERM', 5000);
    },
  };
}

/**
 * One claw-server instance: `start()` (again after a kill), `kill()` (SIGKILL), `freeze()`
 * (SIGSTOP) and `thaw()` (SIGCONT), `stop()` (SIGTERM, then SIGKILL). Its token stays the same
 * across restarts; its ports do not (the OS picks them at each start).
 */
export class Instance {
  /**
   * @param {object} options
   * @param {string} options.name e.g. `A`
   * @param {string} options.folder its own folder (port file, log, state and config homes)
   * @param {string[]} options.workDirs the workspaces it serves (the first is the default)
   * @param {string[]} options.args more claw-server flags
   * @param {Record<string, string>} options.env more environment (the model's URL)
   * @param {string[]} [options.launcher] a command the server is started under (it must exec
   *   node in the same process: its pid is the one signalled)
   */
  constructor({ name, folder, workDirs, args, env, launcher = [] }) {
    this.name = name;
    this.folder = folder;
    this.workDirs = workDirs;
    this.args = args;
    this.env = env;
    this.launcher = launcher;
    this.token = randomBytes(32).toString('hex');
    this.child = undefined;
    this.frozen = false;
    this.starts = 0;
    this.http = undefined;
    this.instanceId = undefined;
    this.tail = '';
    this.logFile = path.join(folder, 'server.log');
    this.log = undefined;
    /** Exits nobody asked for once it served (a crash): {code, signal, at, tail}. */
    this.crashes = [];
    /** Starts that failed (it exited before it listened): {code, signal, at, tail}. */
    this.startFailures = [];
    /** The processes this object was asked to end (their exit is no crash). */
    this.ended = new WeakSet();
  }

  get pid() {
    return this.child?.pid;
  }

  /** Running and not frozen: a client may connect. */
  get serving() {
    return running(this.child) && !this.frozen && this.http !== undefined;
  }

  get alive() {
    return running(this.child);
  }

  note(line) {
    this.log?.write(`[soak ${new Date().toISOString()}] ${line}\n`);
  }

  async start() {
    if (this.alive) throw new Error(`instance ${this.name} runs already`);
    await mkdir(path.join(this.folder, 'state', 'config'), { recursive: true });
    this.log ??= createWriteStream(this.logFile, { flags: 'a' });
    this.starts += 1;
    this.note(`start #${this.starts}`);
    const portFile = path.join(this.folder, `ports-${this.starts}.json`);
    await rm(portFile, { force: true });
    const [command, ...prefix] = this.launcher.length > 0 ? this.launcher : [process.execPath];
    const nodeArgs = this.launcher.length > 0 ? [process.execPath] : [];
    const child = track(spawn(
      command,
      [
        ...prefix, ...nodeArgs, serverMain,
        ...this.workDirs.flatMap((dir) => ['--workdir', dir]),
        '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, ...this.args,
      ],
      {
        cwd: this.folder,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: process.env.HOME ?? this.folder,
          XDG_STATE_HOME: path.join(this.folder, 'state'),
          XDG_CONFIG_HOME: path.join(this.folder, 'state', 'config'),
          OPENAI_API_KEY: 'soak',
          OPENAI_MODEL: 'soak-model',
          CLAW_SERVER_TOKEN: this.token,
          // Node options for the instances only (a preload to debug them, say).
          ...(process.env.SOAK_SERVER_NODE_OPTIONS === undefined
            ? {}
            : { NODE_OPTIONS: process.env.SOAK_SERVER_NODE_OPTIONS }),
          ...this.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ));
    this.child = child;
    this.frozen = false;
    this.http = undefined;
    const collect = (text) => {
      this.log?.write(text);
      this.tail = (this.tail + text).slice(-20_000);
      const id = /\(instance ([0-9a-f-]{36});/.exec(text)?.[1];
      if (id !== undefined) this.instanceId = id;
    };
    this.tail = '';
    child.stdout.setEncoding('utf8').on('data', collect);
    child.stderr.setEncoding('utf8').on('data', collect);
    child.once('exit', (code, signal) => {
      this.note(`exited (${code ?? signal})`);
      if (this.ended.has(child)) return;
      const found = { code, signal, at: new Date().toISOString(), tail: this.tail.slice(-4000) };
      if (this.http === undefined) this.startFailures.push(found);
      else this.crashes.push(found);
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!running(child)) throw new Error(`claw-server ${this.name} did not start (exit ${child.exitCode ?? child.signalCode}):\n${this.tail}`);
      if (Date.now() > deadline) throw new Error(`claw-server ${this.name} did not listen within 30 s:\n${this.tail}`);
      const ports = await readFile(portFile, 'utf8').then(JSON.parse, () => undefined);
      if (ports !== undefined) {
        this.http = ports.http;
        return;
      }
      await sleep(25);
    }
  }

  /** SIGKILL (a crash); resolves once it is gone. */
  async kill() {
    const child = this.child;
    if (!running(child)) return;
    this.note('SIGKILL');
    this.ended.add(child);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    process.kill(child.pid, 'SIGKILL');
    await exited;
    this.frozen = false;
    this.http = undefined;
  }

  freeze() {
    if (!running(this.child) || this.frozen) return false;
    this.note('SIGSTOP');
    process.kill(this.child.pid, 'SIGSTOP');
    this.frozen = true;
    return true;
  }

  thaw() {
    if (!running(this.child) || !this.frozen) return;
    this.note('SIGCONT');
    process.kill(this.child.pid, 'SIGCONT');
    this.frozen = false;
  }

  /** SIGTERM (it stops in order), SIGKILL after `ms`. */
  async stop(ms = 20_000) {
    this.thaw();
    this.note('SIGTERM');
    if (this.child !== undefined) this.ended.add(this.child);
    await stopChild(this.child, 'SIGTERM', ms);
    this.http = undefined;
  }

  /** Closes its log file (after it stopped). */
  async closeLog() {
    const log = this.log;
    this.log = undefined;
    if (log !== undefined) await new Promise((resolve) => log.end(resolve));
  }
}
