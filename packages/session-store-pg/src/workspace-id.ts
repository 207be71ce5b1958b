import { randomUUID } from 'node:crypto';
import fs, { link, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, errorMessage, prepareStateFolder, stateFolderName } from '@claw/core';
import { PgSessionError } from './errors.js';

/** Where a workspace keeps its logical id: `<workspace>/.claw/workspace.json`. */
export const workspaceIdPath = path.join(stateFolderName, 'workspace.json');

const maxIdLength = 200;

/**
 * The logical id of the workspace at `workDir` (SCALE-5): the same on every instance that mounts
 * the shared folder, wherever it is mounted, so that sessions and grants are bound to the
 * workspace and not to one machine's path. Kept in `.claw/workspace.json` (`{"id": "…"}`), made
 * with a random id the first time (two instances making it at once agree: the first file wins).
 *
 * @throws PgSessionError `workspace_unavailable` when the file cannot be read or made, or does
 *   not hold an id.
 */
export async function workspaceIdOf(workDir: string): Promise<string> {
  const file = path.join(workDir, workspaceIdPath);
  const read = async (): Promise<string | undefined> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return undefined;
      throw unavailable(file, `cannot be read: ${errorMessage(error)}`, error);
    }
    let id: unknown;
    try {
      id = (JSON.parse(text) as { id?: unknown }).id;
    } catch (error) {
      throw unavailable(file, 'is not JSON', error);
    }
    if (typeof id !== 'string' || id.trim() === '' || id.length > maxIdLength) {
      throw unavailable(file, `does not hold an "id" of 1 to ${maxIdLength} characters`);
    }
    return id;
  };
  const found = await read();
  if (found !== undefined) return found;
  // Written whole beside it, then linked into place: the link is made only where there is no
  // file yet (two instances making it at once agree: the first wins), and a reader never sees a
  // file without its id.
  const temporary = `${file}.${randomUUID()}.tmp`;
  try {
    await prepareStateFolder(fs, path.dirname(file));
    await writeFile(temporary, `${JSON.stringify({ id: randomUUID() })}\n`, { flag: 'wx', mode: 0o644 });
    await link(temporary, file);
  } catch (error) {
    if (errnoCode(error) !== 'EEXIST') throw unavailable(file, `cannot be made: ${errorMessage(error)}`, error);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  const made = await read();
  if (made === undefined) throw unavailable(file, 'vanished while it was made');
  return made;
}

function unavailable(file: string, problem: string, cause?: unknown): PgSessionError {
  return new PgSessionError(
    `The workspace id file ${file} ${problem}. It names the workspace on every claw instance ` +
    '(SCALE-5): restore it from another instance\'s copy of the shared folder, or remove it to ' +
    'give the workspace a new id (its sessions and grants then stay with the old one).',
    { code: 'workspace_unavailable', cause, userError: true },
  );
}

/**
 * The session is bound to a workspace this instance cannot reach (SCALE-5,
 * `workspace_unavailable`): it is refused here rather than run in the wrong folder.
 */
export class WorkspaceUnavailableError extends PgSessionError {
  declare readonly code: 'workspace_unavailable';
  readonly sessionId: string;
  readonly workDir: string;
  /** The workspace the session belongs to, when it is not the one at `workDir` here. */
  readonly workspace: string | undefined;

  constructor(
    options: { sessionId: string; workDir: string; workspace?: string; cause?: unknown },
  ) {
    super(
      options.workspace === undefined
        ? `Session ${JSON.stringify(options.sessionId)} works in ${options.workDir}, which this ` +
        'claw instance cannot reach. Mount the shared workspace folder on every instance, or ' +
        'open the session through an instance that has it.'
        : `Session ${JSON.stringify(options.sessionId)} belongs to workspace ` +
          `${JSON.stringify(options.workspace)}, and ${options.workDir} on this claw instance is ` +
          'another workspace. Open it in the folder where that workspace is mounted (its ' +
          `${workspaceIdPath} names it), or through an instance that has it.`,
      { code: 'workspace_unavailable', cause: options.cause, userError: true },
    );
    this.sessionId = options.sessionId;
    this.workDir = options.workDir;
    this.workspace = options.workspace;
  }
}
