import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  ClawUserError,
  type AtomicWriteFileSystem,
  errnoCode,
  errorMessage,
  prepareStateFolder,
  stateFolderName,
  userStateFolder,
  writeFileAtomically,
} from '@claw/core';

/**
 * The files a running claw-server leaves for users and scripts (TRUST-4):
 *
 * - `<workspace>/.claw/server.json`: `{"tcp", "http", "pid"}`, and with a generated token
 *   `"token_file"`, where that token is. Never the token itself: the model's file tools reach into
 *   the workspace.
 * - the token file, only for a token the server generated: `<state folder>/<workspace id>.json`
 *   (see `serverStateFolder` and `workspaceStateId`), mode 0600 in a folder of mode 0700, holding
 *   `{"token", "tcp", "http", "pid", "workspace"}` (the first workspace's real path).
 *
 * A token given with `--token-file` or CLAW_SERVER_TOKEN is written nowhere.
 */
export interface ServerFiles {
  /** `<workspace>/.claw/server.json`. */
  record: string;
  /** The token file of a generated token. */
  tokenFile: string;
  /** The real path of the workspace both are about. */
  workspace: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The folder of the servers' token files: `$XDG_STATE_HOME/claw/servers` (an XDG_STATE_HOME that
 * is not absolute is ignored, as the XDG spec says), else `$HOME/.local/state/claw/servers`, else
 * the same under the user's home folder from the system.
 */
export function serverStateFolder(env: Env): string {
  const folder = userStateFolder(env) ?? userStateFolder({ HOME: os.userInfo().homedir }) ??
    path.join(os.userInfo().homedir, '.local', 'state', 'claw');
  return path.join(folder, 'servers');
}

/**
 * The id of a workspace in its token file's name: the folder's name as a readable slug (lower
 * case; letters, digits, `.`, `_`, `-`; at most 40 characters; `workspace` if none is left), a
 * `-`, and the first 16 hex digits of the SHA-256 of its real path, e.g.
 * `myproject-3f2a9c1b7d4e5a60`. Stable for one folder however it is reached (`realPath` has its
 * symlinks resolved), distinct for two folders of the same name.
 */
export function workspaceStateId(realPath: string): string {
  const digest = createHash('sha256').update(realPath).digest('hex').slice(0, 16);
  const slug = path.basename(realPath)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[.-]+|-+$/g, '')
    .slice(0, 40);
  return `${slug === '' ? 'workspace' : slug}-${digest}`;
}

/**
 * Where the server of `workspace` (its first workspace root) keeps its files, and where a client
 * finds the token that server generated: `tokenFile`. `env` gives XDG_STATE_HOME and HOME.
 *
 * @throws the error of `realpath` when the workspace does not exist.
 */
export async function serverFiles(options: {
  workspace: string;
  env: Env;
}): Promise<ServerFiles> {
  const workspace = await fs.realpath(options.workspace);
  return {
    record: path.join(options.workspace, stateFolderName, 'server.json'),
    tokenFile: path.join(serverStateFolder(options.env), `${workspaceStateId(workspace)}.json`),
    workspace,
  };
}

/** The file operations {@link writeServerFiles} does (met by `fs/promises`). */
export type ServerFileSystem = AtomicWriteFileSystem
  & Pick<typeof fs, 'chmod'> & { mkdir: typeof fs.mkdir };

/** A failed file operation in words a user can act on (a full disk says so, not `ENOSPC`). */
export function fileProblem(error: unknown): string {
  switch (errnoCode(error)) {
    case 'ENOSPC':
      return 'no space left on the device: free some space';
    case 'EDQUOT':
      return 'the disk quota is used up: free some space';
    case 'EROFS':
      return 'the file system is read-only';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case undefined:
    default:
      return errnoCode(error) ?? errorMessage(error);
  }
}

/**
 * Writes the files of a listening server, each atomically: the token file (for a `generated`
 * token only) and then `.claw/server.json` pointing at it. A token file that cannot be written
 * stops the server (its clients could not find the token), with what to do; `server.json` is a
 * convenience for scripts, so one that cannot be written (a full disk) is said through `warn` and
 * the server goes on: it may still serve what is stored, and its writes say why they fail.
 */
export async function writeServerFiles(
  files: ServerFiles,
  listening: { tcp: number; http: number; generated?: string },
  options: { warn: (line: string) => void; fileSystem?: ServerFileSystem },
): Promise<void> {
  const fileSystem = options.fileSystem ?? fs;
  const ports = { tcp: listening.tcp, http: listening.http, pid: process.pid };
  const json = (value: object): string => `${JSON.stringify(value, null, 2)}\n`;
  if (listening.generated !== undefined) {
    const folder = path.dirname(files.tokenFile);
    const record = { token: listening.generated, ...ports, workspace: files.workspace };
    try {
      await fileSystem.mkdir(folder, { recursive: true, mode: 0o700 });
      // A folder that was there already may have been made wider: only its owner may list it.
      await fileSystem.chmod(folder, 0o700);
      await writeFileAtomically(fileSystem, files.tokenFile, json(record), { mode: 0o600 });
    } catch (error) {
      const full = ['ENOSPC', 'EDQUOT'].includes(errnoCode(error) ?? '');
      throw new ClawUserError(
        `cannot write the generated token to ${files.tokenFile} (${fileProblem(error)}): ` +
        `${full ? 'free space there, ' : `make ${folder} a folder of yours, `}set ` +
        'XDG_STATE_HOME to another folder, or give the token with --token-file or ' +
        'CLAW_SERVER_TOKEN',
        { code: 'usage', cause: error },
      );
    }
  }
  const record =
    listening.generated === undefined ? ports : { ...ports, token_file: files.tokenFile };
  try {
    await prepareStateFolder(fileSystem, path.dirname(files.record));
    await writeFileAtomically(fileSystem, files.record, json(record), { mode: 0o600 });
  } catch (error) {
    options.warn(
      `claw-server: cannot write ${files.record} (${fileProblem(error)}); serving all the same ` +
      `on TCP port ${listening.tcp} and HTTP port ${listening.http}, but scripts that look there ` +
      'will not find this server (--port-file writes the ports elsewhere)',
    );
  }
}

/** Removes the server's files that still describe this process (another may have taken over). */
export async function removeServerFiles(files: ServerFiles): Promise<void> {
  await Promise.all([removeOwn(files.record), removeOwn(files.tokenFile)]);
}

async function removeOwn(file: string): Promise<void> {
  try {
    const record = JSON.parse(await fs.readFile(file, 'utf8')) as { pid?: unknown };
    if (record.pid === process.pid) await fs.rm(file, { force: true });
  } catch {
    // Not written (the server did not start, or its token was given) or not ours any more.
  }
}
