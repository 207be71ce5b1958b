import { constants } from 'node:fs';
import { mkdir, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import nodePath from 'node:path';
import { PathOutsideWorkspaceError } from './errors.js';
import { isInside } from './resolve.js';

// On Linux a directory's descriptor can stand in for its path (`/proc/self/fd/N/name`), which
// works like `openat`: names resolve in the very directory that was opened and checked, whatever
// is renamed or swapped for a link on the way to it afterwards.
const descriptorPaths = process.platform === 'linux';

/**
 * An open folder inside the workspace whose real location was checked after opening. Files are
 * created, renamed and removed through `entry(name)`, so they land in this folder even if a path
 * leading to it is swapped for a link in the meantime. Close it when done.
 */
export class WorkspaceDirectory {
  private constructor(
    private readonly handle: FileHandle,
    /** The real path of the folder, as checked. */
    readonly realPath: string,
  ) {}

  /**
   * Opens the folder `relativeDir` (relative to the real workspace root `realRoot`), one
   * component at a time, each checked to lie inside the workspace after it is opened; with
   * `create`, missing folders are made on the way (inside the checked parent).
   *
   * @throws PathOutsideWorkspaceError when a component leads outside the workspace.
   * @throws the file system's error (ENOENT without `create`, ENOTDIR, …) otherwise.
   */
  static async open(
    realRoot: string,
    relativeDir: string,
    options: { create: boolean; askedFor: string },
  ): Promise<WorkspaceDirectory> {
    const components = relativeDir.split(nodePath.sep).filter((part) => part !== '' && part !== '.');
    let current = await WorkspaceDirectory.openChecked(realRoot, realRoot, options.askedFor);
    try {
      for (const component of components) {
        if (component === '..') {
          throw new PathOutsideWorkspaceError(
            `The path ${JSON.stringify(options.askedFor)} leaves the workspace.`,
            { path: options.askedFor },
          );
        }
        const next = current.entry(component);
        if (options.create) {
          await mkdir(next).catch((error: unknown) => {
            if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
          });
        }
        const opened = await WorkspaceDirectory.openChecked(next, realRoot, options.askedFor);
        await current.close();
        current = opened;
      }
      return current;
    } catch (error) {
      await current.close();
      throw error;
    }
  }

  private static async openChecked(
    path: string,
    realRoot: string,
    askedFor: string,
  ): Promise<WorkspaceDirectory> {
    const handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const location = await locationOf(handle, path);
      if (location === undefined || !isInside(realRoot, location)) {
        throw new PathOutsideWorkspaceError(
          `The path ${JSON.stringify(askedFor)} is outside the workspace (a folder on the way ` +
          'leads outside it; a link may have been swapped in). Use a path inside the workspace.',
          { path: askedFor },
        );
      }
      return new WorkspaceDirectory(handle, location);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** A path naming `name` inside this very folder. */
  entry(name: string): string {
    if (name.includes('/') || name === '..' || name === '.' || name === '') {
      throw new TypeError(`not a plain file name: ${JSON.stringify(name)}`);
    }
    return descriptorPaths
      ? `/proc/self/fd/${this.handle.fd}/${name}`
      : nodePath.join(this.realPath, name);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

async function locationOf(handle: FileHandle, path: string): Promise<string | undefined> {
  if (descriptorPaths) return readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  // Elsewhere: the path's real location, if it is still the folder that was opened.
  try {
    const real = await realpath(path);
    const [opened, named] = await Promise.all([handle.stat(), stat(real)]);
    return opened.dev === named.dev && opened.ino === named.ino ? real : undefined;
  } catch {
    return undefined;
  }
}
