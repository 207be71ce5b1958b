import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import { readFile, rm } from 'node:fs/promises';
import packageJson from '../package.json' with { type: 'json' };
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClawUserError,
  errnoCode,
  errorMessage,
  writeFileAtomically,
} from '@claw/core';
import {
  RuntimeFactory,
  createFileTracing,
  resolveSettings,
  resolveWorkDir,
  untrustedNotice,
  type Settings,
  type Tracing,
} from '@claw/runtime';
import { createDemoModel, createDemoWorkspace } from '@claw/testing/demo';
import type { PgSessionLog, PgSessions } from '@claw/session-store-pg';
import { storeFlag, type ServeOptions } from './args.js';
import { ClawServer, type ServerAddress } from './server.js';
import {
  fileProblem,
  removeServerFiles,
  serverFiles,
  writeServerFiles,
} from './server-files.js';
import { isLoopback, urlHost } from './security.js';

/** What serving takes from the process (`main.ts` passes the real ones). */
export interface ServeIo {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Where the listening lines go. */
  out: (line: string) => void;
  /** Where notes and errors go. */
  err: (line: string) => void;
  /** Resolves with the signal's name when the server is asked to stop (SIGTERM, SIGINT). */
  stopRequested: Promise<string>;
  /** Aborts on a second stop request: running tasks are canceled at once. */
  stopNow: AbortSignal;
}

/** The smallest token a given token file or CLAW_SERVER_TOKEN may hold. */
const minTokenLength = 16;

/**
 * Runs claw-server until it is asked to stop, then stops it in order (CH-7) and returns the exit
 * status: 0 stopped, 2 a usage or configuration error (before anything listens).
 *
 * @throws ClawUserError for a configuration error (the caller says it and exits 2).
 */
export async function serve(options: ServeOptions, io: ServeIo): Promise<number> {
  checkHost(options);
  const given = await givenToken(options, io);
  const { roots: workspaces, demo } = await workspaceRoots(options, io);
  const [first] = workspaces;
  if (first === undefined) throw new Error('no workspace');
  let listening = false;
  let tracing: Tracing | undefined;
  let server: ClawServer | undefined;
  let factory: RuntimeFactory | undefined;
  let shared: PgSessions | undefined;
  // The token is kept outside the workspace, where the model's file tools cannot read it (TRUST-4).
  const files = await serverFiles({ workspace: first, env: io.env });
  try {
    const settings = await resolveSettings({
      workDir: first,
      overrides: options.overrides,
      env: io.env,
      // The connected clients answer the questions.
      defaultApproval: 'ask',
      cwd: io.cwd,
    });
    const token = given ?? randomBytes(32).toString('base64url');
    tracing = createFileTracing({ workDir: first, serviceName: 'claw-server' });
    shared = await sharedSessions(
      options,
      io,
      (sessionId, reason) => server?.dropSession(sessionId, reason),
    );
    const store = shared;
    factory = new RuntimeFactory({
      // Sessions, grants and audit rows in the database, bound to each workspace's id (SCALE-4/5).
      ...(store === undefined
        ? {}
        : {
            sessions: store,
            // A task taken over while it asked raises its questions again (SCALE-3).
            resumeInterrupted: true,
            grantStore: (workDir: string) => store.grantStore(workDir),
            auditLog: (workDir: string) => store.auditLog(workDir),
          }),
      settings,
      env: io.env,
      tracer: tracing.tracer,
      ...(options.demo ? { provider: createDemoModel({ unattended: false, endless: true }) } : {}),
      onError: (error, what) => io.err(`claw-server: ${what}: ${errorMessage(error)}`),
      mcp: {
        // A workspace's MCP server that is skipped, drops or comes back (MCP-5).
        onWarning: (warning, workDir) => io.err(`mcp (${workDir}): ${warning.message}`),
        // A server's request for input nobody answers is declined after the time an approval
        // nobody answers waits before it is denied: the idle timeout (MCP-7, CH-10).
        elicitationTimeoutMs: options.idleTimeoutMs,
      },
    });
    await logUntrusted(factory, workspaces, settings, io);
    const isolation = factory.isolation();
    isolation.catch(() => undefined);
    if (settings.sandbox.isolation === 'required') await isolation;
    server = new ClawServer({
      factory,
      workspaces,
      token,
      // Background failures (an idle unload that could not store, a takeover) are said (LIFE-2).
      onError: (line) => io.err(line),
      host: options.host,
      tcpPort: options.tcpPort,
      httpPort: options.httpPort,
      allowOrigins: options.allowOrigins,
      idleTimeoutMs: options.idleTimeoutMs,
      // Sessions another instance owns are served here too, through the store (SCALE-4).
      ...(shared === undefined ? {} : { relay: { log: shared.log } }),
      a2a: {
        approvalTimeoutMs: options.a2aApprovalTimeoutMs,
        maxTasks: options.a2aMaxTasks,
        taskRetentionMs: options.a2aTaskRetentionMs,
      },
      // Left out of the listings, its id kept from new sessions: said, not hidden.
      onUnreadableSession: (session) =>
        io.err(`claw-server: a stored session cannot be read and is not listed: ${session.reason}`),
      version: packageJson.version,
      ...consoleFiles(),
    });
    const address = await server.start().catch((error: unknown) => {
      throw listenError(error, options);
    });
    listening = true;
    await writeServerFiles(
      files,
      { ...address, ...(given === undefined ? { generated: token } : {}) },
      { warn: io.err },
    );
    if (options.portFile !== undefined) {
      const portFile = path.resolve(io.cwd, options.portFile);
      const ports = { tcp: address.tcp, http: address.http, pid: process.pid };
      await writeFileAtomically(fs, portFile, `${JSON.stringify(ports)}\n`, { mode: 0o644 })
        .catch((error: unknown) => {
          throw new ClawUserError(
            `cannot write the port file ${portFile} (${fileProblem(error)}): give --port-file a ` +
            'file in a folder of yours with room, or leave it out',
            { code: 'usage', cause: error },
          );
        });
    }
    const { tokenFile } = files;
    const announcement = { address, settings, workspaces, token, tokenFile, options };
    announce(io, { ...announcement, given: given !== undefined });
    void isolation.then(
      (spawner) => io.err(`bash: ${spawner.description}`),
      (error: unknown) => io.err(`bash: ${errorMessage(error)}`),
    );
    const signal = await io.stopRequested;
    io.err(
      `claw-server: ${signal}: stopping — running tasks get ${options.shutdownGraceMs} ms to ` +
      'finish (send it again to cancel them now)',
    );
    await server.stop({ graceMs: options.shutdownGraceMs, now: io.stopNow });
    io.err('claw-server: stopped; every session is stored');
    return 0;
  } finally {
    if (server === undefined) await factory?.close();
    await shared?.close().catch((error: unknown) => io.err(`store: ${errorMessage(error)}`));
    await tracing?.shutdown().catch(() => undefined);
    await removeServerFiles(files);
    // A demo workspace made for a server that never listened holds nothing of anyone's.
    if (demo !== undefined && !listening) await removeDemoWorkspace(demo, io);
  }
}

/** Removes the demo workspace this run made, saying so (or why it could not). */
async function removeDemoWorkspace(demo: string, io: ServeIo): Promise<void> {
  try {
    await rm(demo, { recursive: true, force: true });
    io.err(`claw-server --demo: removed the demo workspace ${demo}, as the server did not start`);
  } catch (error) {
    io.err(`claw-server --demo: could not remove the demo workspace ${demo}: ${errorMessage(error)}`);
  }
}

/**
 * The PostgreSQL store of `--store` (else CLAW_STORE_URL), opened and migrated (SCALE-1, SCALE-6);
 * `undefined` for the file store (the default). A session whose lease this instance loses has its
 * task stopped and is unloaded (SCALE-2).
 */
async function sharedSessions(
  options: ServeOptions,
  io: ServeIo,
  leaseLost: (sessionId: string, reason: Error) => Promise<void> | undefined,
): Promise<PgSessions | undefined> {
  const url = options.store ?? storeFlag(io.env.CLAW_STORE_URL, 'CLAW_STORE_URL');
  if (url === undefined || url === 'file') return undefined;
  // Loaded only for a PostgreSQL store: the file store's server never loads `pg`.
  const { PgSessionLog: SessionLog, PgSessions: Sessions } = await import('@claw/session-store-pg');
  let log: PgSessionLog;
  try {
    log = await SessionLog.open({
      connectionString: url,
      ...(options.lease ?? {}),
      onLeaseLost: (error) => {
        io.err(`claw-server: ${error.message}`);
        void leaseLost(error.sessionId, error)?.catch(() => undefined);
      },
    });
  } catch (error) {
    throw usage(
      `cannot use the session store ${redacted(url)}: ${errorMessage(error)}. Check the URL, ` +
      'that PostgreSQL (15 or later) is up and that the user may create tables',
    );
  }
  io.err(
    `store: sessions in PostgreSQL at ${redacted(url)} (instance ${log.instanceId}; leases of ` +
    `${log.leaseMs} ms renewed every ${log.renewEveryMs} ms)`,
  );
  return new Sessions({ log });
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

function usage(message: string): ClawUserError {
  return new ClawUserError(message, { code: 'usage' });
}

/** SEC-1: only loopback, unless the operator says otherwise and set the token. */
function checkHost(options: ServeOptions): void {
  if (isLoopback(options.host)) return;
  if (!options.allowRemote) {
    throw usage(
      `refusing to listen on ${options.host}: that is reachable from other machines, and anyone ` +
      'who reaches the server can run tools in your workspace. Use the default 127.0.0.1, or ' +
      'pass --allow-remote together with --token-file (or CLAW_SERVER_TOKEN)',
    );
  }
  // With --allow-remote, givenToken insists on a token the operator set.
}

/** The token the operator set (`--token-file`, else CLAW_SERVER_TOKEN), checked; else none. */
async function givenToken(options: ServeOptions, io: ServeIo): Promise<string | undefined> {
  let token: string | undefined;
  let from: string;
  if (options.tokenFile !== undefined) {
    from = `the token file ${options.tokenFile}`;
    try {
      token = (await readFile(path.resolve(io.cwd, options.tokenFile), 'utf8')).trim();
    } catch (error) {
      throw usage(
        `cannot read ${from} (${errnoCode(error) ?? errorMessage(error)}): create it with a ` +
        'random token, e.g. openssl rand -hex 32 > token.txt',
      );
    }
  } else {
    from = 'CLAW_SERVER_TOKEN';
    token = io.env.CLAW_SERVER_TOKEN?.trim();
    if (token === '') token = undefined;
  }
  if (token === undefined) {
    if (!isLoopback(options.host)) {
      throw usage(
        '--allow-remote needs a token you set: pass --token-file <file> or set ' +
        'CLAW_SERVER_TOKEN (a generated token is only for loopback)',
      );
    }
    return undefined;
  }
  if (token.length < minTokenLength || /\s/.test(token)) {
    throw usage(
      `${from} must hold one token of at least ${minTokenLength} characters without spaces ` +
      `(it has ${token.length}); make one with openssl rand -hex 32`,
    );
  }
  return token;
}

/**
 * The workspace roots sessions may use; `demo`: the one made for `--demo` without `--workdir`
 * (removed again if the server does not start).
 */
async function workspaceRoots(
  options: ServeOptions,
  io: ServeIo,
): Promise<{ roots: string[]; demo?: string }> {
  if (options.workdirs.length === 0) {
    if (options.demo) {
      const demo = await createDemoWorkspace();
      io.err(`claw-server --demo: a fresh workspace with a small project at ${demo}`);
      return { roots: [demo], demo };
    }
    return { roots: [await resolveWorkDir(undefined, io.cwd)] };
  }
  const roots: string[] = [];
  for (const workdir of options.workdirs) {
    const root = await resolveWorkDir(workdir, io.cwd);
    if (!roots.includes(root)) roots.push(root);
  }
  return { roots };
}

/**
 * The web console's build: the copy inside this app's build (dist/console/, what the installed
 * package has), else the web app's of the same checkout (running from source).
 */
function consoleFiles(): { consoleDir?: string } {
  for (const location of ['./console/', '../../web/dist/']) {
    const dir = fileURLToPath(new URL(location, import.meta.url));
    if (existsSync(path.join(dir, 'index.html'))) return { consoleDir: dir };
  }
  return {};
}

function listenError(error: unknown, options: ServeOptions): unknown {
  const code = errnoCode(error);
  if (code === 'EADDRINUSE') {
    return usage(
      `a port is already in use (${errorMessage(error)}): stop what uses it, or pick others ` +
      'with --tcp-port and --http-port (0 = a free port; --port-file tells which)',
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return usage(`cannot listen on ${options.host}: no such address on this machine`);
  }
  if (code === 'EACCES') {
    return usage(`not allowed to listen on that port (${errorMessage(error)}): use a port above 1023`);
  }
  return error;
}

/**
 * The server never asks whether to trust a workspace (TRUST-3): it logs, for each workspace that
 * is not trusted, which of its own settings it did not use and how to trust it.
 */
async function logUntrusted(
  factory: RuntimeFactory,
  workspaces: readonly string[],
  settings: Settings,
  io: ServeIo,
): Promise<void> {
  for (const [index, root] of workspaces.entries()) {
    // The first workspace's config.json gave the settings; the others' only MCP and A2A.
    const trust = index === 0 && settings.workspaceTrust !== undefined
      ? settings.workspaceTrust
      : await factory.workspaceTrust(root);
    const ignored = index === 0 ? settings.ignoredSettings ?? [] : [];
    const how = `run \`claw trust --workdir ${root}\` or start claw-server with --trust-workspace ` +
      'to use them';
    const notice = untrustedNotice(trust, ignored, how);
    if (notice !== undefined) io.err(`claw-server: ${root}: ${notice}`);
  }
}

interface Announcement {
  address: ServerAddress;
  settings: Settings;
  workspaces: readonly string[];
  token: string;
  given: boolean;
  tokenFile: string;
  options: ServeOptions;
}

function announce(io: ServeIo, what: Announcement): void {
  const { address, settings, options } = what;
  const host = urlHost(address.host);
  const model = options.demo ? 'scripted demo model (no API key used)' : `model ${settings.model}`;
  io.out(`claw-server ${packageJson.version} — ${model} · approval ${settings.approval}`);
  io.out(`workspace${what.workspaces.length === 1 ? '' : 's'}: ${what.workspaces.join(', ')}`);
  io.out(`tcp:       ${host}:${address.tcp} (JSON lines)`);
  io.out(`websocket: ws://${host}:${address.http}/ws`);
  // A token the operator set is never printed (TRUST-4): they know it, and output ends up in logs.
  io.out(
    what.given
      ? `console:   http://${host}:${address.http}/ (add #token=<your token>)`
      : `console:   http://${host}:${address.http}/#token=${what.token}`,
  );
  io.out(
    what.given
      ? 'token:     the one you gave (--token-file or CLAW_SERVER_TOKEN), not printed'
      : `token:     generated, in ${what.tokenFile} (mode 0600)`,
  );
  io.out(`Stop with Ctrl-C or SIGTERM (running tasks get ${options.shutdownGraceMs} ms to finish).`);
}
