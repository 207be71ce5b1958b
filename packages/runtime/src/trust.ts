import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import path from 'node:path';
import {
  ClawUserError,
  errnoCode,
  errorMessage,
  userStateFolder,
  writeFileAtomically,
} from '@claw/core';
import { z } from 'zod';

// Trust of a workspace's settings files (TRUST-1..3). A cloned repository's `.claw/config.json`
// could send the user's API key to its own URL, turn approvals and the sandbox off; its
// `.claw/mcp.json` could start any program with the user's secrets; its `.claw/a2a.json` could
// send them to any agent. claw uses those files only once the user said yes to exactly their
// present content: the yes is kept outside the workspace, with a digest of each file, so a
// changed file needs a new yes.

/** The files of a workspace's `.claw/` folder that take trust, in the order they are shown. */
export const trustedSettingsFiles = ['config.json', 'mcp.json', 'a2a.json'] as const;
/** One of the workspace settings files that take trust (`trustedSettingsFiles`). */
export type TrustedSettingsFile = (typeof trustedSettingsFiles)[number];

/** The record of trusted workspaces, in the user's claw folder. */
export const trustRecordName = 'trusted.json';

type Env = Readonly<Record<string, string | undefined>>;

/** One settings file of a workspace, as it is now. */
export interface SettingsFileState {
  name: TrustedSettingsFile;
  /** Absolute path. */
  path: string;
  /** `sha256:<hex>` of its bytes. */
  digest: string;
}

/** Whether claw may use a workspace's settings files, and why (TRUST-1). */
export interface WorkspaceTrust {
  /** The workspace's real path, as the record names it. */
  root: string;
  trusted: boolean;
  /**
   * `no-settings`: the workspace has none of the files (nothing to trust); `recorded`: the
   * record has the workspace with these very files; `given`: `--trust-workspace`; `unknown`:
   * the record does not have the workspace; `changed`: it does, but a file changed, appeared or
   * went since (`changed` names them).
   */
  reason: 'no-settings' | 'recorded' | 'given' | 'unknown' | 'changed';
  /** The settings files present. */
  files: readonly SettingsFileState[];
  /** With `changed`: the files that differ from what was trusted. */
  changed: readonly TrustedSettingsFile[];
}

const recordSchema = z.strictObject({
  version: z.literal(1),
  workspaces: z.record(
    z.string().min(1),
    z.strictObject({
      trustedAt: z.string(),
      files: z.record(z.string(), z.string()),
    }),
  ),
});

type TrustRecord = z.infer<typeof recordSchema>;

/** Where the trust record is and what the command line says, for the workspace trust checks. */
export interface TrustOptions {
  /** The process environment: where the record is (`XDG_CONFIG_HOME`, else `HOME`). */
  env: Env;
  /** `--trust-workspace`: trusted whatever the record says. */
  trustAll?: boolean;
}

/**
 * Where the record of trusted workspaces is: `$XDG_CONFIG_HOME/claw/trusted.json` (an absolute
 * XDG_CONFIG_HOME), else `$HOME/.config/claw/trusted.json`; undefined without either.
 */
export function trustRecordFile(env: Env): string | undefined {
  const folder = userClawFolder(env);
  return folder === undefined ? undefined : path.join(folder, trustRecordName);
}

/** `$XDG_CONFIG_HOME/claw` (when absolute), else `$HOME/.config/claw`; undefined without either. */
export function userClawFolder(env: Env): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'claw');
  const home = env.HOME;
  if (home === undefined || home === '' || !path.isAbsolute(home)) return undefined;
  return path.join(home, '.config', 'claw');
}

/**
 * The user's claw folders, which the model's tools and commands must not reach (TRUST-4):
 * `$XDG_CONFIG_HOME/claw` (settings, the trust record) and `$XDG_STATE_HOME/claw` (the servers'
 * tokens) where those variables are absolute paths, and the defaults under an absolute HOME
 * (`~/.config/claw`, `~/.local/state/claw`), which a workspace that is the home folder holds.
 */
export function userClawFolders(env: Env): string[] {
  const home = { HOME: env.HOME };
  const folders = [
    userClawFolder(env),
    userStateFolder(env),
    userClawFolder(home),
    userStateFolder(home),
  ].filter((folder): folder is string => folder !== undefined);
  return [...new Set(folders.map((folder) => path.normalize(folder)))];
}

/**
 * How a workspace stands: its settings files now, against the record.
 *
 * @throws ClawUserError `trust_record_invalid` when the record cannot be read or is not claw's.
 */
export async function checkWorkspaceTrust(
  workDir: string,
  options: TrustOptions,
): Promise<WorkspaceTrust> {
  const root = await realRoot(workDir);
  const files = await settingsFiles(root);
  const result = (reason: WorkspaceTrust['reason'], changed: TrustedSettingsFile[] = []) => ({
    root,
    trusted: reason === 'no-settings' || reason === 'recorded' || reason === 'given',
    reason,
    files,
    changed,
  });
  if (files.length === 0) return result('no-settings');
  if (options.trustAll === true) return result('given');
  const file = trustRecordFile(options.env);
  const entry = file === undefined ? undefined : (await readRecord(file)).workspaces[root];
  if (entry === undefined) return result('unknown');
  const changed = trustedSettingsFiles.filter((name) =>
    entry.files[name] !== files.find((each) => each.name === name)?.digest);
  return changed.length === 0 ? result('recorded') : result('changed', changed);
}

/**
 * Records the workspace as trusted with its settings files as they are now (`claw trust`, a yes
 * in the REPL). A file added or changed later is not trusted until this is done again.
 *
 * @throws ClawUserError `trust_record_unavailable` without a home folder; `trust_record_invalid`
 *   for a record that is not claw's; the write's error when the folder cannot be written.
 */
export async function trustWorkspace(
  workDir: string,
  options: { env: Env },
): Promise<WorkspaceTrust> {
  const file = requireRecordFile(options.env);
  const root = await realRoot(workDir);
  const files = await settingsFiles(root);
  const record = await readRecord(file);
  record.workspaces[root] = {
    trustedAt: new Date().toISOString(),
    files: Object.fromEntries(files.map((each) => [each.name, each.digest])),
  };
  await writeRecord(file, record);
  return { root, trusted: true, reason: files.length === 0 ? 'no-settings' : 'recorded', files, changed: [] };
}

/**
 * Takes the workspace out of the record (`claw trust --revoke`); false when it was not in it.
 *
 * @throws as {@link trustWorkspace}.
 */
export async function revokeWorkspaceTrust(
  workDir: string,
  options: { env: Env },
): Promise<boolean> {
  const file = requireRecordFile(options.env);
  const root = await realRoot(workDir);
  const record = await readRecord(file);
  if (record.workspaces[root] === undefined) return false;
  delete record.workspaces[root];
  await writeRecord(file, record);
  return true;
}

/** The workspaces the record trusts, with when (`claw trust --list`). */
export async function trustedWorkspaces(
  options: { env: Env },
): Promise<Array<{ root: string; trustedAt: string }>> {
  const file = trustRecordFile(options.env);
  if (file === undefined) return [];
  const record = await readRecord(file);
  return Object.entries(record.workspaces)
    .map(([root, entry]) => ({ root, trustedAt: entry.trustedAt }));
}

async function realRoot(workDir: string): Promise<string> {
  return fs.realpath(workDir).catch(() => path.resolve(workDir));
}

async function settingsFiles(root: string): Promise<SettingsFileState[]> {
  const states = await Promise.all(trustedSettingsFiles.map(async (name) => {
    const file = path.join(root, '.claw', name);
    try {
      const bytes = await fs.readFile(file);
      return { name, path: file, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}` };
    } catch (error) {
      if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
      // A file that is there but cannot be read cannot be used either; it still needs trust.
      return { name, path: file, digest: `unreadable:${errnoCode(error) ?? 'error'}` };
    }
  }));
  return states.filter((state): state is SettingsFileState => state !== undefined);
}

function requireRecordFile(env: Env): string {
  const file = trustRecordFile(env);
  if (file === undefined) {
    throw new ClawUserError(
      'claw cannot keep a record of trusted workspaces: neither HOME nor XDG_CONFIG_HOME is set ' +
      '(to an absolute path); set one, or pass --trust-workspace on each run',
      { code: 'trust_record_unavailable' },
    );
  }
  return file;
}

async function readRecord(file: string): Promise<TrustRecord> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { version: 1, workspaces: {} };
    throw invalidRecord(file, `cannot be read (${errorMessage(error)})`, error);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw invalidRecord(file, 'is not valid JSON', error);
  }
  const parsed = recordSchema.safeParse(json);
  if (!parsed.success) throw invalidRecord(file, 'is not a record claw wrote', parsed.error);
  return parsed.data;
}

function invalidRecord(file: string, problem: string, cause: unknown): ClawUserError {
  return new ClawUserError(
    `the record of trusted workspaces ${file} ${problem}; remove it (every workspace is then ` +
    'untrusted until you trust it again with claw trust)',
    { code: 'trust_record_invalid', cause },
  );
}

async function writeRecord(file: string, record: TrustRecord): Promise<void> {
  // Only the user may read or change what they trust.
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFileAtomically(fs, file, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
}
