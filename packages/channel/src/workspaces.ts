import { realpathSync } from 'node:fs';
import path from 'node:path';
import { isInside } from '@claw/sandbox';
import { ChannelError } from './errors.js';

function real(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}

/**
 * The workspace a client may open a session in (SEC-7): `requested` (default: the first root)
 * must be one of the roots or lie inside one, lexically and after symlinks (never a string
 * prefix test: `/srv/ws` does not admit `/srv/ws-evil`).
 *
 * @throws ChannelError `workdir_not_allowed`.
 */
export function allowedWorkDir(roots: readonly string[], requested: string | undefined): string {
  const first = roots[0];
  if (first === undefined) {
    throw new ChannelError('this server has no workspace: start it with --workdir', {
      code: 'workdir_not_allowed',
    });
  }
  if (requested === undefined) return path.resolve(first);
  const wanted = path.resolve(first, requested);
  for (const root of roots) {
    const resolvedRoot = path.resolve(root);
    if (isInside(resolvedRoot, wanted) && isInside(real(resolvedRoot), real(wanted))) return wanted;
  }
  throw new ChannelError(
    `the folder ${JSON.stringify(requested)} is outside this server's workspace` +
    `${roots.length === 1 ? '' : 's'} (${roots.join(', ')}); open a session in one of them`,
    { code: 'workdir_not_allowed' },
  );
}
