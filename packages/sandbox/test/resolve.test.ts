import { ClawError, hasErrorCode } from '@claw/core';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidPathError,
  PathOutsideWorkspaceError,
  SandboxError,
  SymlinkResolutionError,
  isInside,
  locateWithinWorkspace,
  relativeInside,
  resolveWithinWorkspace,
  workspaceFiles,
} from '../src/index.js';

let base: string;
let workspace: string;
let outside: string;

beforeEach(async () => {
  base = await mkdtemp(path.join(os.tmpdir(), 'claw-sbx-'));
  workspace = path.join(base, 'ws');
  outside = path.join(base, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'secret');
});

afterEach(async () => {
  await chmod(path.join(workspace, 'locked'), 0o755).catch(() => undefined);
  await rm(base, { recursive: true, force: true });
});

async function failure(workDir: string, target: string): Promise<unknown> {
  try {
    const resolved = await resolveWithinWorkspace(workDir, target);
    return new Error(`expected a rejection, got ${resolved}`);
  } catch (error) {
    return error;
  }
}

async function expectOutside(workDir: string, target: string): Promise<void> {
  const error = await failure(workDir, target);
  expect(error).toBeInstanceOf(PathOutsideWorkspaceError);
  expect(error).toBeInstanceOf(SandboxError);
  expect(error).toBeInstanceOf(ClawError);
  const outsideError = error as PathOutsideWorkspaceError;
  expect(outsideError.code).toBe('path_outside_workspace');
  expect(outsideError.path).toBe(target);
  expect(outsideError.message).toContain('outside the workspace');
  expect(outsideError.message).toContain('relative to the workspace root');
}

async function expectInvalid(workDir: string, target: string): Promise<void> {
  const error = await failure(workDir, target);
  expect(error).toBeInstanceOf(InvalidPathError);
  expect(error).toBeInstanceOf(SandboxError);
  expect((error as InvalidPathError).code).toBe('invalid_path');
}

async function expectUnresolvable(workDir: string, target: string, cause: string): Promise<void> {
  const error = await failure(workDir, target);
  expect(error).toBeInstanceOf(SymlinkResolutionError);
  expect(error).not.toBeInstanceOf(PathOutsideWorkspaceError);
  const resolutionError = error as SymlinkResolutionError;
  expect(resolutionError.code).toBe('symlink_resolution_failed');
  expect(resolutionError.path).toBe(target);
  expect((resolutionError.cause as NodeJS.ErrnoException).code).toBe(cause);
  expect(hasErrorCode(error, 'symlink_resolution_failed')).toBe(true);
}

describe('resolveWithinWorkspace: lexical escapes (SBX-1)', () => {
  for (const [target, why] of [
    ['..', 'the parent of the root'],
    ['../x', 'one level up'],
    ['a/../../x', 'down then two up'],
    ['a/b/../../../x', 'nested .. that ends above the root'],
    ['./../ws-evil/x', 'a sibling whose name starts with the root name'],
    ['../ws-evil', 'the sibling itself: no string-prefix test'],
  ] as const) {
    it(`rejects ${JSON.stringify(target)} (${why})`, async () => {
      await mkdir(path.join(base, 'ws-evil'));
      await expectOutside(workspace, target);
    });
  }
});

describe('resolveWithinWorkspace: absolute paths (SBX-1)', () => {
  it('admits an absolute path inside the workspace and returns it normalised', async () => {
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'src', 'a.go'), '');
    for (const [target, parts] of [
      [path.join(workspace, 'src', 'a.go'), ['src', 'a.go']],
      [path.join(workspace, 'new', 'file.ts'), ['new', 'file.ts']],
      [`${workspace}/src/../b.txt`, ['b.txt']],
      [`${workspace}/./src//a.go`, ['src', 'a.go']],
      [workspace, []],
      [`${workspace}/`, []],
    ] as const) {
      await expect(resolveWithinWorkspace(workspace, target)).resolves.toBe(
        path.join(workspace, ...parts),
      );
    }
  });

  it('gives the real locations it checked for an absolute path', async () => {
    const real = await realpath(workspace);
    await expect(locateWithinWorkspace(workspace, path.join(workspace, 'a.txt'))).resolves.toEqual({
      path: path.join(workspace, 'a.txt'),
      relative: 'a.txt',
      realPath: path.join(real, 'a.txt'),
      realRoot: real,
      files: await workspaceFiles(real),
    });
  });

  for (const [what, target] of [
    ['a system file', () => '/etc/passwd'],
    ['the file-system root', () => '/'],
    ['a file in a folder next to the workspace', () => path.join(outside, 'secret.txt')],
    ['the parent of the workspace', () => base],
    ['a sibling whose name starts with the root name', () => `${workspace}-evil/x`],
    ['that sibling itself: no string-prefix test', () => `${workspace}-evil`],
    ['a path that climbs out through ..', () => `${workspace}/../outside/secret.txt`],
    ['a path that climbs out deeper down', () => `${workspace}/a/../../ws-evil`],
  ] as const) {
    it(`rejects an absolute path outside: ${what}`, async () => {
      await mkdir(path.join(base, 'ws-evil'));
      await expectOutside(workspace, target());
    });
  }

  it('says that an outside absolute path is absolute and outside', async () => {
    const error = (await failure(workspace, '/etc/passwd')) as PathOutsideWorkspaceError;
    expect(error.message).toContain('"/etc/passwd" is outside the workspace');
    expect(error.message).toContain('is absolute');
  });

  it('follows symlinks of an absolute path as it does for a relative one', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'));
    await expectOutside(workspace, path.join(workspace, 'linkdir'));
    await expectOutside(workspace, path.join(workspace, 'linkdir', 'secret.txt'));
    await expectOutside(workspace, path.join(workspace, 'linkdir', 'new', 'file.txt'));
    await expectOutside(workspace, path.join(workspace, 'link.txt'));
    await expectOutside(workspace, path.join(workspace, 'dangling'));
  });

  it('reports a symlink loop on an absolute path as a resolution failure', async () => {
    await symlink('loop-b', path.join(workspace, 'loop-a'));
    await symlink('loop-a', path.join(workspace, 'loop-b'));
    await expectUnresolvable(workspace, path.join(workspace, 'loop-a'), 'ELOOP');
  });

  describe('when the workspace root is itself a symlink', () => {
    let linkedRoot: string;
    let realRoot: string;

    beforeEach(async () => {
      linkedRoot = path.join(base, 'ws-link');
      await symlink(workspace, linkedRoot);
      realRoot = await realpath(workspace);
      await mkdir(path.join(workspace, 'src'));
    });

    it('admits an absolute path spelled through the link', async () => {
      await expect(resolveWithinWorkspace(linkedRoot, path.join(linkedRoot, 'src', 'a.ts'))).resolves.toBe(
        path.join(linkedRoot, 'src', 'a.ts'),
      );
      await expect(resolveWithinWorkspace(linkedRoot, linkedRoot)).resolves.toBe(linkedRoot);
    });

    it('admits an absolute path spelled through the real location, spelled as the workspace sees it', async () => {
      await expect(resolveWithinWorkspace(linkedRoot, path.join(realRoot, 'src', 'a.ts'))).resolves.toBe(
        path.join(linkedRoot, 'src', 'a.ts'),
      );
      await expect(resolveWithinWorkspace(linkedRoot, realRoot)).resolves.toBe(linkedRoot);
      await expect(locateWithinWorkspace(linkedRoot, path.join(realRoot, 'b.txt'))).resolves.toEqual({
        path: path.join(linkedRoot, 'b.txt'),
        relative: 'b.txt',
        realPath: path.join(realRoot, 'b.txt'),
        realRoot,
        files: await workspaceFiles(realRoot),
      });
    });

    it('rejects, in either spelling, an absolute path whose symlinks lead outside', async () => {
      await symlink(outside, path.join(workspace, 'linkdir'));
      await expectOutside(linkedRoot, path.join(linkedRoot, 'linkdir', 'secret.txt'));
      await expectOutside(linkedRoot, path.join(realRoot, 'linkdir', 'secret.txt'));
    });

    it('rejects absolute paths next to either spelling of the root', async () => {
      await mkdir(path.join(base, 'ws-evil'));
      await mkdir(path.join(base, 'ws-link-evil'));
      await expectOutside(linkedRoot, `${realRoot}-evil/x`);
      await expectOutside(linkedRoot, `${linkedRoot}-evil/x`);
      await expectOutside(linkedRoot, path.join(outside, 'secret.txt'));
    });

    it('rejects an absolute path that reaches the workspace only through another link', async () => {
      // Lexically outside both spellings of the root; the real location is not what decides.
      const elsewhere = path.join(outside, 'into-ws');
      await symlink(workspace, elsewhere);
      await expectOutside(linkedRoot, path.join(elsewhere, 'src', 'a.ts'));
    });
  });
});

describe('resolveWithinWorkspace: unusable input (SBX-1)', () => {
  it('rejects an empty or blank path', async () => {
    await expectInvalid(workspace, '');
    await expectInvalid(workspace, '   ');
  });

  it('rejects an empty or blank workspace directory', async () => {
    await expectInvalid('', 'a.txt');
    await expectInvalid(' \t', 'a.txt');
  });

  it('rejects a NUL byte in the path or in the workspace directory', async () => {
    await expectInvalid(workspace, 'a\0.txt');
    await expectInvalid(`${workspace}\0`, 'a.txt');
    const error = (await failure(workspace, 'a\0b')) as InvalidPathError;
    expect(error.message).toContain('NUL byte');
  });
});

/**
 * Looks the workspace up once and waits until its kind of file calls is known: later lookups
 * there take the way without waits (the root's real location remembered, one direct `realpath`),
 * which must check exactly what the first lookup checks.
 */
async function knowWorkspace(): Promise<void> {
  await resolveWithinWorkspace(workspace, '.');
  await workspaceFiles(await realpath(workspace));
}

describe.each([
  ['', false],
  [', in a workspace already looked up', true],
])('resolveWithinWorkspace: symlinks (SBX-1)%s', (_, known) => {
  beforeEach(async () => {
    if (known) await knowWorkspace();
  });

  it('rejects a file symlink inside the workspace that points outside', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    await expectOutside(workspace, 'link.txt');
  });

  it('rejects a folder symlink that points outside, and anything under it', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    await expectOutside(workspace, 'linkdir');
    await expectOutside(workspace, 'linkdir/secret.txt');
  });

  it('rejects a file not yet written under a symlinked folder that points outside', async () => {
    await symlink(outside, path.join(workspace, 'linkdir'));
    await expectOutside(workspace, 'linkdir/new/deeper/file.txt');
  });

  it('rejects a dangling symlink whose target would be created outside', async () => {
    await symlink(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling'));
    await expectOutside(workspace, 'dangling');
  });

  it('rejects a relative dangling symlink that climbs out', async () => {
    await symlink('../outside/not-yet.txt', path.join(workspace, 'dangling'));
    await expectOutside(workspace, 'dangling');
  });

  it('rejects a dangling symlink used as a folder on the way', async () => {
    await symlink(path.join(outside, 'missing-dir'), path.join(workspace, 'dangling-dir'));
    await expectOutside(workspace, 'dangling-dir/file.txt');
  });

  it('follows a relative dangling symlink from its real folder, not its lexical one', async () => {
    // Lexically `a/b/up/dangling` → `a/b/escaped.txt`; really `up` is the root, so it is outside.
    await mkdir(path.join(workspace, 'a', 'b'), { recursive: true });
    await symlink(workspace, path.join(workspace, 'a', 'b', 'up'));
    await symlink('../escaped.txt', path.join(workspace, 'dangling'));
    await expectOutside(workspace, 'a/b/up/dangling');
  });

  it('admits a dangling symlink that points inside the workspace', async () => {
    await symlink('not-yet.txt', path.join(workspace, 'inner-link'));
    await expect(resolveWithinWorkspace(workspace, 'inner-link')).resolves.toBe(
      path.join(workspace, 'inner-link'),
    );
  });

  it('admits a symlink to another place inside the workspace', async () => {
    await mkdir(path.join(workspace, 'real'));
    await symlink(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    await expect(resolveWithinWorkspace(workspace, 'alias/x.txt')).resolves.toBe(
      path.join(workspace, 'alias', 'x.txt'),
    );
  });

  it('reports a symlink loop as a resolution failure, not as outside', async () => {
    await symlink('loop-b', path.join(workspace, 'loop-a'));
    await symlink('loop-a', path.join(workspace, 'loop-b'));
    await expectUnresolvable(workspace, 'loop-a', 'ELOOP');
    await expectUnresolvable(workspace, 'loop-a/file.txt', 'ELOOP');
  });

  it('reports a file used as a folder as a resolution failure', async () => {
    await writeFile(path.join(workspace, 'plain.txt'), 'x');
    await expectUnresolvable(workspace, 'plain.txt/child', 'ENOTDIR');
  });

  it.skipIf(process.getuid?.() === 0)('reports a folder it may not enter', async () => {
    await mkdir(path.join(workspace, 'locked', 'inner'), { recursive: true });
    await chmod(path.join(workspace, 'locked'), 0o000);
    await expectUnresolvable(workspace, 'locked/inner/file.txt', 'EACCES');
  });

  it('works when the workspace root is itself a symlink, and returns the lexical path', async () => {
    const linkedRoot = path.join(base, 'ws-link');
    await symlink(workspace, linkedRoot);
    await mkdir(path.join(workspace, 'src'));
    await expect(resolveWithinWorkspace(linkedRoot, 'src/new.ts')).resolves.toBe(
      path.join(linkedRoot, 'src', 'new.ts'),
    );
    await expect(resolveWithinWorkspace(linkedRoot, '.')).resolves.toBe(linkedRoot);
    await symlink(outside, path.join(workspace, 'linkdir'));
    await expectOutside(linkedRoot, 'linkdir/secret.txt');
  });

  it('works when the real workspace is reached through a symlinked parent', async () => {
    // os.tmpdir() may itself be a symlink (it is on macOS); the real root must still match.
    const realWorkspace = await realpath(workspace);
    await expect(resolveWithinWorkspace(realWorkspace, 'a.txt')).resolves.toBe(
      path.join(realWorkspace, 'a.txt'),
    );
  });

  it('gives the real locations of an existing file reached through a link inside', async () => {
    await mkdir(path.join(workspace, 'real'));
    await writeFile(path.join(workspace, 'real', 'x.txt'), 'x');
    await symlink(path.join(workspace, 'real'), path.join(workspace, 'alias'));
    const realWorkspace = await realpath(workspace);
    const located = await locateWithinWorkspace(workspace, 'alias/x.txt');
    expect(located).toMatchObject({
      path: path.join(workspace, 'alias', 'x.txt'),
      relative: path.join('alias', 'x.txt'),
      realPath: path.join(realWorkspace, 'real', 'x.txt'),
      realRoot: realWorkspace,
    });
    expect(located.files).toBe(await workspaceFiles(realWorkspace));
  });

  it('sees a link swapped in since the last lookup of the same path', async () => {
    await writeFile(path.join(workspace, 'swap.txt'), 'x');
    await resolveWithinWorkspace(workspace, 'swap.txt');
    await rm(path.join(workspace, 'swap.txt'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'swap.txt'));
    await expectOutside(workspace, 'swap.txt');
  });
});

describe('resolveWithinWorkspace: paths inside (SBX-1)', () => {
  for (const [target, parts, why] of [
    ['a.txt', ['a.txt'], 'a plain file name'],
    ['.', [], 'the root itself'],
    ['new/nested/deep/file.ts', ['new', 'nested', 'deep', 'file.ts'], 'a new nested file'],
    ['./a/../b', ['b'], 'a .. that stays inside'],
    ['docs/../a.go', ['a.go'], 'up and back down'],
    ['my file.txt', ['my file.txt'], 'spaces'],
    ['ünï cødé/文件.md', ['ünï cødé', '文件.md'], 'non-ASCII names'],
    ['..hidden', ['..hidden'], 'a name that merely starts with two dots'],
    ['a/./b/', ['a', 'b'], 'dot segments and a trailing slash'],
  ] as const) {
    it(`returns the lexical path for ${JSON.stringify(target)} (${why})`, async () => {
      await expect(resolveWithinWorkspace(workspace, target)).resolves.toBe(
        path.join(workspace, ...parts),
      );
    });
  }

  it('returns the lexical path of an existing file', async () => {
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'src', 'index.ts'), '');
    await expect(resolveWithinWorkspace(workspace, 'src/index.ts')).resolves.toBe(
      path.join(workspace, 'src', 'index.ts'),
    );
  });

  it('works for a workspace that does not exist yet', async () => {
    const missing = path.join(base, 'not-created');
    await expect(resolveWithinWorkspace(missing, 'a/b.txt')).resolves.toBe(
      path.join(missing, 'a', 'b.txt'),
    );
    await expectOutside(missing, '../ws/x');
  });
});

describe('resolveWithinWorkspace: the remembered real root (SBX-1)', () => {
  it('refuses paths once the root\'s link points elsewhere, though the old target was remembered', async () => {
    const link = path.join(base, 'link-to-ws');
    await symlink(workspace, link);
    await writeFile(path.join(workspace, 'a.txt'), 'a');
    await writeFile(path.join(outside, 'a.txt'), 'not yours');
    const first = await locateWithinWorkspace(link, 'a.txt');
    expect(first.realRoot).toBe(await realpath(workspace));
    // The link now leads outside: what it leads to is not the workspace claw knew.
    await rm(link);
    await symlink(outside, link);
    await expectOutside(link, 'a.txt');
    await expectOutside(link, 'secret.txt');
  });

  it('resolves a root that did not exist yet when it appears, also as a link', async () => {
    const later = path.join(base, 'later');
    const before = await locateWithinWorkspace(later, 'x.txt');
    expect(before.realRoot).toBe(path.join(await realpath(base), 'later'));
    await symlink(workspace, later);
    const after = await locateWithinWorkspace(later, 'x.txt');
    expect(after.realRoot).toBe(await realpath(workspace));
    expect(after.realPath).toBe(path.join(await realpath(workspace), 'x.txt'));
  });
});

describe('isInside', () => {
  // The definition: by path segments, as `path.relative` sees them.
  const bySegments = (root: string, candidate: string): boolean => {
    const relative = path.relative(root, candidate);
    return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
  };
  const pairs: Array<[string, string, boolean]> = [
    ['/srv/ws', '/srv/ws', true],
    ['/srv/ws', '/srv/ws/a/b.txt', true],
    ['/srv/ws', '/srv/ws-evil', false],
    ['/srv/ws', '/srv/ws-evil/a', false],
    ['/srv/ws', '/srv/wsa', false],
    ['/srv/ws', '/srv', false],
    ['/srv/ws', '/srv/WS/a', false],
    ['/srv/ws', '/srv/ws/..data', true],
    ['/srv/ws', '/srv/ws/.claw/audit.jsonl', true],
    ['/srv/ws', '/srv/ws/../etc', false],
    ['/srv/ws', '/srv/ws/./a', true],
    ['/srv/ws', '/srv/ws//a', true],
    ['/srv/ws/', '/srv/ws/a', true],
    ['/srv/ws/', '/srv/ws-evil', false],
    ['/home', '/home/../etc', false],
    ['/', '/', true],
    ['/', '/etc/passwd', true],
    ['/srv/ws', '/', false],
  ];
  it.each(pairs)('isInside(%j, %j) is %j, as path segments say', (root, candidate, inside) => {
    expect(bySegments(root, candidate)).toBe(inside);
    expect(isInside(root, candidate)).toBe(inside);
    // relativeInside: what path.relative gives when inside, nothing when outside.
    expect(relativeInside(root, candidate)).toBe(inside ? path.relative(root, candidate) : undefined);
  });
});

describe('locateWithinWorkspace: the relative path messages show', () => {
  // The definition: path.relative from the workspace root, `.` for the root itself.
  const cases: Array<[string, string]> = [
    ['a.txt', 'a.txt'],
    ['src/deep/b.ts', 'src/deep/b.ts'],
    ['.', '.'],
    ['./a.txt', 'a.txt'],
    ['src/../a.txt', 'a.txt'],
    ['src//b.ts', 'src/b.ts'],
    ['src/', 'src'],
    ['.claw/config.json', '.claw/config.json'],
    ['..data/x', '..data/x'],
  ];
  it.each(cases)('%j is shown as %j, from a plain root and from one spelled with a slash', async (asked, shown) => {
    const plain = await locateWithinWorkspace(workspace, asked);
    expect(plain.relative).toBe(shown);
    expect(plain.relative).toBe(path.relative(workspace, plain.path) || '.');
    expect((await locateWithinWorkspace(`${workspace}/`, asked)).relative).toBe(shown);
    const absolute = await locateWithinWorkspace(workspace, path.join(workspace, asked));
    expect(absolute.relative).toBe(shown);
  });
});
