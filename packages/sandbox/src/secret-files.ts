import nodePath from 'node:path';
import { stateFolderName } from '@claw/core';
import { ProtectedPathError } from './errors.js';
import { isInside, locateWithinWorkspace, relativeInside, type WorkspaceLocation } from './resolve.js';

// Which workspace files hold secrets that are not for the model (TRUST-4): claw's own state, in a
// `.claw` folder at any depth, and `.env` files. The file tools and the approval policy ask here.

/**
 * The files of a `.claw` folder that hold settings, not state: the model may read them (writing
 * them is refused like any change of a `.claw` folder, see `protectedPathReason`).
 */
export const clawSettingsFiles: readonly string[] = ['config.json', 'mcp.json', 'a2a.json'];

/** Why claw's state is refused to the tools, in their refusals. */
export const clawStateReason =
  'it is claw\'s own state (sessions, grants, audit, traces, the server\'s token), which is not ' +
  'for the model';

/**
 * What a workspace-relative path (`/` between segments) is to claw: `'state'` when a segment is
 * `.claw` (at any depth, compared case-insensitively: on a case-insensitive file system `.CLAW`
 * is `.claw`) and the path is that folder or anything in it other than one of
 * {@link clawSettingsFiles} directly in it (compared exactly; `.gitignore` counts as state);
 * `'settings'` for those; `undefined` when no segment is `.claw`.
 */
export function clawFolderEntry(relative: string): 'state' | 'settings' | undefined {
  const segments = relative.split('/');
  const at = segments.findIndex((segment) => segment.toLowerCase() === stateFolderName);
  if (at === -1) return undefined;
  const rest = segments.slice(at + 1);
  return rest.length === 1 && clawSettingsFiles.includes(rest[0] ?? '') ? 'settings' : 'state';
}

/**
 * The last parts of `.env` file names that mark a template (`.env.example`, `.env.sample`,
 * `.env.template`, `.env.dist`; also `.env.local.example`): files meant to be shared, without
 * the secrets.
 */
export const envTemplateSuffixes: readonly string[] = ['example', 'sample', 'template', 'dist'];

/**
 * True when the last segment of a workspace-relative path (`/` between segments) is an env file:
 * `.env` or `.env.<anything>` (case-insensitively), except templates (see
 * {@link envTemplateSuffixes}). Only the name counts: the files in a folder named `.env` (a Python
 * virtual environment, say) are not env files.
 */
export function isEnvFile(relative: string): boolean {
  const name = relative.slice(relative.lastIndexOf('/') + 1).toLowerCase();
  if (name === '.env') return true;
  if (!name.startsWith('.env.')) return false;
  return !envTemplateSuffixes.includes(name.slice(name.lastIndexOf('.') + 1));
}

/**
 * The ways a located path is spelled from the workspace root, with `/` between segments: as
 * asked for (lexically), and where it really is (symlinks followed) when that differs. The root
 * itself is `.`.
 */
export function workspaceSpellings(
  location: Pick<WorkspaceLocation, 'relative' | 'realPath' | 'realRoot'>,
): string[] {
  const lexical = portable(location.relative);
  const real = portable(relativeInside(location.realRoot, location.realPath) ?? '') || '.';
  return real === lexical ? [lexical] : [lexical, real];
}

/**
 * True when the located path is claw's state ({@link clawFolderEntry}), spelled as asked for or
 * where it really is, so a link elsewhere in the workspace to `.claw/grants.json` counts too.
 * When the workspace's own `.claw` is a symlink to a folder inside the workspace (claw then
 * keeps its state there), what lies in that folder counts as in `.claw`.
 *
 * A hard link to a state file is not seen here (it has no name in `.claw`); the file tools
 * refuse files with more than one link when they open them (`verifyOpenedFile`).
 */
export async function isClawState(location: WorkspaceLocation): Promise<boolean> {
  const spellings = workspaceSpellings(location);
  if (spellings.some((spelling) => clawFolderEntry(spelling) === 'state')) return true;
  const linked = await linkedStateFolder(location);
  if (linked === undefined || !isInside(linked, location.realPath)) return false;
  const inFolder = portable(relativeInside(linked, location.realPath) ?? '');
  return clawFolderEntry(inFolder === '' ? stateFolderName : `${stateFolderName}/${inFolder}`) ===
    'state';
}

/**
 * The real location of the workspace root's `.claw` when it is a symlink to a folder strictly
 * inside the workspace; otherwise undefined (not a link, missing, or leading elsewhere: a link
 * out of the workspace puts the state where no workspace path reaches).
 */
async function linkedStateFolder(location: WorkspaceLocation): Promise<string | undefined> {
  const folder = nodePath.join(location.realRoot, stateFolderName);
  let real: string;
  try {
    real = await location.files.realpath(folder);
  } catch {
    return undefined;
  }
  return real !== folder && real !== location.realRoot && isInside(location.realRoot, real)
    ? real
    : undefined;
}

/**
 * `locateWithinWorkspace` for a file a tool is about to read: the same checks and errors, and
 * claw's state ({@link isClawState}) is refused.
 *
 * @throws the errors of `resolveWithinWorkspace`.
 * @throws ProtectedPathError when the path is claw's state.
 */
export async function resolveReadableFile(
  workDir: string,
  path: string,
): Promise<WorkspaceLocation> {
  const location = await locateWithinWorkspace(workDir, path);
  if (await isClawState(location)) throw new ProtectedPathError({ path, reason: clawStateReason });
  return location;
}

/** `relative` with `/` between its segments, whatever the platform's separator. */
function portable(relative: string): string {
  return nodePath.sep === '/' ? relative : relative.split(nodePath.sep).join('/');
}
