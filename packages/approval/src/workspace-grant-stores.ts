import { realpath } from 'node:fs/promises';
import nodePath from 'node:path';
import { FileGrantStore } from './file-grant-store.js';

/** One store per real workspace path, for the whole process. */
const stores = new Map<string, FileGrantStore>();

/**
 * The one `FileGrantStore` of this process for the workspace `workDir` (APR-3): every call for
 * the same real folder (symlinks followed) gets the same instance, so sessions in one workspace
 * never overwrite each other's grant file. A folder that does not exist yet is taken as spelled.
 */
export async function grantStoreForWorkspace(workDir: string): Promise<FileGrantStore> {
  const root = await realpath(workDir).catch(() => nodePath.resolve(workDir));
  let store = stores.get(root);
  if (store === undefined) {
    store = new FileGrantStore({ workDir: root });
    stores.set(root, store);
  }
  return store;
}
