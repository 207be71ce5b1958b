import { stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from './errors.js';

/**
 * The workspace folder: `--workdir` resolved against the current folder, or the current folder.
 *
 * @throws UsageError when it does not exist or is not a folder.
 */
export async function resolveWorkDir(given: string | undefined, cwd: string): Promise<string> {
  const workDir = path.resolve(cwd, given ?? '.');
  let isFolder: boolean;
  try {
    isFolder = (await stat(workDir)).isDirectory();
  } catch {
    throw new UsageError(
      `the workspace folder ${workDir} does not exist: create it, or pass an existing folder ` +
      'with --workdir',
    );
  }
  if (!isFolder) {
    throw new UsageError(`${workDir} is not a folder: pass the project folder with --workdir`);
  }
  return workDir;
}
