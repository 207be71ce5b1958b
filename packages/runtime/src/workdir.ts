import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ClawUserError } from '@claw/core';

/**
 * The workspace folder: `--workdir` resolved against the current folder, or the current folder.
 *
 * @throws ClawUserError `usage` when it does not exist or is not a folder.
 */
export async function resolveWorkDir(given: string | undefined, cwd: string): Promise<string> {
  const workDir = path.resolve(cwd, given ?? '.');
  let isFolder: boolean;
  try {
    isFolder = (await stat(workDir)).isDirectory();
  } catch {
    throw new ClawUserError(
      `the workspace folder ${workDir} does not exist: create it, or pass an existing folder ` +
      'with --workdir',
      { code: 'usage' },
    );
  }
  if (!isFolder) {
    throw new ClawUserError(`${workDir} is not a folder: pass the project folder with --workdir`, {
      code: 'usage',
    });
  }
  return workDir;
}
