import type { AtomicWriteFileSystem } from './atomic-write.js';

/** The folder of a workspace where claw keeps its state and its settings. */
export const stateFolderName = '.claw';

/**
 * What the `.gitignore` claw makes in a workspace's `.claw` folder says: the state there (the
 * sessions, which hold what the tools read, grants, the audit log, traces, the server's token,
 * the workspace id of a shared store) stays out of version control; the settings files may be
 * shared with the project, so they are not ignored. It ignores itself too.
 */
export const stateFolderIgnore = [
  '# Made by claw: this folder holds its state for this workspace (sessions, with what the tools',
  '# read; grants; the audit log; traces; the server\'s token), which does not belong in version',
  '# control. The settings files may be shared, so they are not ignored. claw makes this file',
  '# only when there is none: edit it to choose otherwise.',
  '*',
  '!config.json',
  '!mcp.json',
  '!a2a.json',
  '',
].join('\n');

/** The file operations {@link prepareStateFolder} needs (met by `fs/promises`). */
export type StateFolderFileSystem = Pick<AtomicWriteFileSystem, 'mkdir' | 'open'>;

/** The folders this process gave an ignore file (or found one in). */
const ignoreFileLookedAt = new Set<string>();

/**
 * Makes a workspace's state folder (`folder`, its `.claw`) when it is missing, and gives it a
 * `.gitignore` ({@link stateFolderIgnore}) when it has none, so that a `git add` of the project
 * does not take claw's state with it. An existing `.gitignore` is never changed. Every writer of
 * a file in the folder calls it first: the folder is made whenever it is missing (it may have been
 * removed while claw runs), and the ignore file is looked at once per folder and process, and
 * again when the folder had to be made afresh.
 *
 * @throws whatever making the folder throws (the caller's write could not succeed either); a
 *   failure to write the ignore file is not the caller's, and is not reported.
 */
export async function prepareStateFolder(
  fileSystem: StateFolderFileSystem,
  folder: string,
): Promise<void> {
  // `fs.mkdir` with `recursive` gives the first folder it made, undefined when there was one.
  const made = await fileSystem.mkdir(folder, { recursive: true });
  if (made === undefined && ignoreFileLookedAt.has(folder)) return;
  ignoreFileLookedAt.add(folder);
  try {
    const handle = await fileSystem.open(`${folder}/.gitignore`, 'wx', 0o644);
    try {
      await handle.writeFile(stateFolderIgnore, 'utf8');
    } finally {
      await handle.close();
    }
  } catch {
    // There is one already (EEXIST), or it cannot be written: the state is written all the same.
  }
}

/**
 * The user's own claw state folder, outside every workspace (TRUST-4: the servers' tokens, MCP
 * login tokens): `$XDG_STATE_HOME/claw` when XDG_STATE_HOME is an absolute path (a relative one
 * is invalid under the XDG Base Directory spec and would land in the current folder), else
 * `$HOME/.local/state/claw` when HOME is absolute; undefined without either. `env` is passed in
 * (the app's environment): no package reads `process.env` itself. Paths are joined with `/`.
 */
export function userStateFolder(
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const xdg = absolute(env.XDG_STATE_HOME);
  if (xdg !== undefined) return `${xdg}/claw`;
  const home = absolute(env.HOME);
  return home === undefined ? undefined : `${home}/.local/state/claw`;
}

/** `folder` without trailing slashes when it is an absolute path, else undefined. */
function absolute(folder: string | undefined): string | undefined {
  if (folder === undefined || !folder.startsWith('/')) return undefined;
  return folder.replace(/\/+$/, '');
}
