import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ClawUserError } from '@claw/core';
import {
  flagParseError,
  readSettingFlags,
  settingFlagOptions,
  stringFlag,
  wholeNumberFlag,
  type FlagValues,
  type SettingOverrides,
} from '@claw/runtime';

/** What the command line of `claw-server` says (CH-12), checked. */
export interface ServeOptions {
  /** The workspace roots as given (relative to the current folder); empty = the current folder. */
  workdirs: string[];
  host: string;
  tcpPort: number;
  httpPort: number;
  portFile: string | undefined;
  tokenFile: string | undefined;
  allowRemote: boolean;
  /** Origins allowed to open WebSockets besides the console's own (SEC-3). */
  allowOrigins: string[];
  demo: boolean;
  shutdownGraceMs: number;
  idleTimeoutMs: number;
  /**
   * How long a tool call of an inbound A2A task waits for a console's answer before it is denied
   * (A2A-2); 0 denies at once.
   */
  a2aApprovalTimeoutMs: number;
  /** How many inbound A2A tasks run at once; more are refused (TRUST-6). */
  a2aMaxTasks: number;
  /** How long a finished inbound A2A task stays answerable by `GetTask` (TRUST-6). */
  a2aTaskRetentionMs: number;
  /** The settings the flags set (`--model`, `--approval`, budgets, timeouts). */
  overrides: SettingOverrides;
  /**
   * Where sessions are stored (SCALE-6): a `postgres://` URL shared by several instances,
   * `'file'` for the file store under each workspace, or `undefined` when `--store` was not given
   * (then CLAW_STORE_URL may set one; the file store is the default).
   */
  store: string | undefined;
  /**
   * With a PostgreSQL store: how long a session's lease lasts without renewal (SCALE-2), and how
   * often it is renewed (default: a third of the lease). `undefined`: the store's defaults.
   */
  lease: { leaseMs: number; renewEveryMs: number } | undefined;
}

export type ServerCommand =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'serve'; options: ServeOptions };

/** Defaults of CH-6, CH-7 and CH-10. */
export const serveDefaults = {
  host: '127.0.0.1',
  tcpPort: 8080,
  httpPort: 8081,
  shutdownGraceMs: 10_000,
  idleTimeoutMs: 30 * 60_000,
  a2aApprovalTimeoutMs: 60_000,
  a2aMaxTasks: 8,
  a2aTaskRetention: '24h',
  leaseMs: 10_000,
  leaseRenewMs: 3_000,
} as const;

/** The shortest lease `--lease-ms` accepts: a shorter one lapses at the first slow query. */
export const minLeaseMs = 1_000;

const parseOptions = {
  workdir: { type: 'string', multiple: true },
  host: { type: 'string' },
  'tcp-port': { type: 'string' },
  'http-port': { type: 'string' },
  'port-file': { type: 'string' },
  'token-file': { type: 'string' },
  'allow-remote': { type: 'boolean' },
  'allow-origin': { type: 'string', multiple: true },
  demo: { type: 'boolean' },
  'shutdown-grace-ms': { type: 'string' },
  'a2a-approval-timeout-ms': { type: 'string' },
  'a2a-max-tasks': { type: 'string' },
  'a2a-task-retention': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  store: { type: 'string' },
  'lease-ms': { type: 'string' },
  'lease-renew-ms': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  ...settingFlagOptions,
} satisfies ParseArgsConfig['options'];

const seeHelp = 'run `claw-server --help` to see the options';

function usage(message: string): ClawUserError {
  return new ClawUserError(message, { code: 'usage' });
}

/**
 * Reads the command line of `claw-server` (CH-12).
 *
 * @throws ClawUserError `usage` for an unknown option, a positional argument, a missing or bad
 *   value (a port outside 0–65535, an origin that is not `scheme://host[:port]`…).
 */
export function parseServerArgs(argv: readonly string[]): ServerCommand {
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: parseOptions,
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    throw flagParseError(error, seeHelp);
  }
  if (values.help === true) return { kind: 'help' };
  if (values.version === true) return { kind: 'version' };
  const [extra] = positionals;
  if (extra !== undefined) {
    throw usage(
      `unexpected argument "${extra}": claw-server takes only options (a workspace is given ` +
      `with --workdir ${extra}); ${seeHelp}`,
    );
  }
  const flags = values as FlagValues;
  const workdirs = list(values.workdir);
  for (const workdir of workdirs) {
    if (workdir.trim() === '') throw usage('--workdir needs a folder, e.g. --workdir ~/project');
  }
  const host = stringFlag(flags, 'host') ?? serveDefaults.host;
  if (host.trim() === '') throw usage('--host needs an address, e.g. --host 127.0.0.1');
  return {
    kind: 'serve',
    options: {
      workdirs,
      host,
      tcpPort: port(flags, 'tcp-port', serveDefaults.tcpPort),
      httpPort: port(flags, 'http-port', serveDefaults.httpPort),
      portFile: fileFlag(flags, 'port-file'),
      tokenFile: fileFlag(flags, 'token-file'),
      allowRemote: values['allow-remote'] === true,
      allowOrigins: list(values['allow-origin']).map(origin),
      demo: values.demo === true,
      shutdownGraceMs: milliseconds(flags, 'shutdown-grace-ms', serveDefaults.shutdownGraceMs),
      idleTimeoutMs: milliseconds(flags, 'idle-timeout-ms', serveDefaults.idleTimeoutMs),
      a2aApprovalTimeoutMs: milliseconds(
        flags,
        'a2a-approval-timeout-ms',
        serveDefaults.a2aApprovalTimeoutMs,
      ),
      a2aMaxTasks: wholeNumberFlag(
        'a2a-max-tasks',
        stringFlag(flags, 'a2a-max-tasks') ?? String(serveDefaults.a2aMaxTasks),
        1,
      ),
      a2aTaskRetentionMs: durationFlag(
        'a2a-task-retention',
        stringFlag(flags, 'a2a-task-retention') ?? serveDefaults.a2aTaskRetention,
      ),
      overrides: readSettingFlags(flags),
      store: storeFlag(stringFlag(flags, 'store'), '--store'),
      lease: leaseFlags(flags),
    },
  };
}

/**
 * A store URL, checked (SCALE-6): `postgres://` or `postgresql://`, or `file` (the default).
 *
 * @throws ClawUserError `usage` for anything else.
 */
export function storeFlag(text: string | undefined, from: string): string | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  if (text.trim() === 'file') return 'file';
  if (!/^postgres(ql)?:\/\/./.test(text.trim())) {
    throw usage(
      `${from} takes a PostgreSQL URL such as postgres://claw@db.example.com/claw (or "file" ` +
      'for the sessions folder of each workspace, the default)',
    );
  }
  return text.trim();
}

/**
 * `--lease-ms` and `--lease-renew-ms`, checked: a lease of at least {@link minLeaseMs}, renewed
 * (by default every third of it) more often than every half lease, since the owner fences itself
 * after half a lease without a renewal.
 */
function leaseFlags(values: FlagValues): ServeOptions['lease'] {
  const leaseText = stringFlag(values, 'lease-ms');
  const renewText = stringFlag(values, 'lease-renew-ms');
  if (leaseText === undefined && renewText === undefined) return undefined;
  const leaseMs = leaseText === undefined ? serveDefaults.leaseMs : wholeNumberFlag('lease-ms', leaseText, minLeaseMs);
  const renewEveryMs = renewText === undefined
    ? Math.floor(leaseMs / 3)
    : wholeNumberFlag('lease-renew-ms', renewText, 1);
  if (renewEveryMs >= leaseMs / 2) {
    throw usage(
      `--lease-renew-ms must be below half of the lease (${leaseMs} ms): the owner gives a session ` +
      `up after half a lease without a renewal. Got ${renewEveryMs}; e.g. --lease-renew-ms ` +
      `${Math.floor(leaseMs / 3)}, or leave it out (a third of the lease)`,
    );
  }
  return { leaseMs, renewEveryMs };
}

function list(value: string | boolean | string[] | undefined): string[] {
  return Array.isArray(value) ? value : [];
}

function port(values: FlagValues, flag: string, fallback: number): number {
  const text = stringFlag(values, flag);
  if (text === undefined) return fallback;
  const value = wholeNumberFlag(flag, text, 0);
  if (value > 65_535) {
    throw usage(`--${flag} must be a port from 0 to 65535 (0 = a free one), got "${text}"`);
  }
  return value;
}

function milliseconds(values: FlagValues, flag: string, fallback: number): number {
  const text = stringFlag(values, flag);
  return text === undefined ? fallback : wholeNumberFlag(flag, text, 0);
}

const durationUnits: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 60 * 60_000,
  d: 24 * 60 * 60_000,
};

/**
 * A duration such as `24h`, `90m`, `30s`, `500ms` or `7d`: a whole number and a unit, in ms.
 *
 * @throws ClawUserError `usage` for anything else (a bare number too: its unit would be a guess).
 */
export function durationFlag(flag: string, text: string): number {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  const value = match === null ? Number.NaN : Number(match[1]) * (durationUnits[match[2] ?? ''] ?? Number.NaN);
  if (!Number.isSafeInteger(value)) {
    throw usage(
      `--${flag} needs a duration: a whole number and one of the units ms, s, m, h, d, ` +
      `got "${text}"; e.g. --${flag} 24h or --${flag} 90m`,
    );
  }
  return value;
}

function fileFlag(values: FlagValues, flag: string): string | undefined {
  const file = stringFlag(values, flag);
  if (file !== undefined && file.trim() === '') {
    throw usage(`--${flag} needs a file name, e.g. --${flag} ./claw-server.${flag.split('-')[0]}`);
  }
  return file;
}

/** An origin as browsers send it: `scheme://host[:port]`, nothing after (SEC-3). */
function origin(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.origin !== text.replace(/\/$/, '')
  ) {
    throw usage(
      '--allow-origin takes an origin as a browser sends it, scheme://host[:port] with nothing ' +
      `after it, got "${text}"; e.g. --allow-origin https://console.example.com`,
    );
  }
  return url.origin;
}
