import { link, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ProtectedPathError,
  checkProtectedPaths,
  clawFolderEntry,
  clawStateReason,
  isClawState,
  isEnvFile,
  locateWithinWorkspace,
  pooledFiles,
  resolveReadableFile,
  resolveWritableFile,
  verifyOpenedFile,
  workspaceFiles,
} from '../src/index.js';

let workspace: string;

beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-secrets-')));
  await mkdir(path.join(workspace, '.claw/sessions'), { recursive: true });
  await mkdir(path.join(workspace, 'sub/.claw'), { recursive: true });
  for (const file of ['.claw/grants.json', '.claw/config.json', '.claw/sessions/x.jsonl', 'sub/.claw/grants.json']) {
    await writeFile(path.join(workspace, file), `content of ${file}\n`);
  }
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** The code a promise is refused with, or `accepted`. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(() => 'accepted', (error: unknown) => (error as { code?: string }).code ?? String(error));
}

describe('clawFolderEntry (TRUST-4)', () => {
  it.each([
    ['.claw/grants.json', 'state'],
    ['.claw/sessions/x.jsonl', 'state'],
    ['.claw/audit.jsonl', 'state'],
    ['.claw/traces/t.json', 'state'],
    ['.claw/server.json', 'state'],
    ['.claw/.gitignore', 'state'],
    ['.claw', 'state'],
    ['sub/.claw/grants.json', 'state'],
    ['a/b/.CLAW/Grants.json', 'state'],
    ['.claw/sessions/config.json', 'state'],
    ['.claw/x/.claw/config.json', 'state'],
    ['.claw/CONFIG.JSON', 'state'],
    ['.claw/config.json', 'settings'],
    ['.claw/mcp.json', 'settings'],
    ['.claw/a2a.json', 'settings'],
    ['sub/.Claw/config.json', 'settings'],
    ['.clawrc', undefined],
    ['docs/.claw-notes.md', undefined],
    ['claw/grants.json', undefined],
    ['.', undefined],
  ])('%s is %s', (relative, kind) => {
    expect(clawFolderEntry(relative)).toBe(kind);
  });
});

describe('isEnvFile (TRUST-4)', () => {
  it.each(['.env', '.env.local', '.env.production', 'config/.env.production', 'a/b/.ENV', '.env.', '.env.example.local'])(
    '%s is an env file',
    (relative) => {
      expect(isEnvFile(relative)).toBe(true);
    },
  );

  it.each(['.env.example', '.env.sample', '.env.template', '.env.dist', 'web/.env.local.example', '.ENV.EXAMPLE', '.envrc', 'env', 'x.env', '.env/lib/site.py', 'src/.env-loader.ts'])(
    '%s is not one',
    (relative) => {
      expect(isEnvFile(relative)).toBe(false);
    },
  );
});

describe('isClawState and resolveReadableFile (TRUST-4)', () => {
  const state = async (relative: string) => isClawState(await locateWithinWorkspace(workspace, relative));

  it.each(['.claw/grants.json', '.claw/sessions/x.jsonl', './.claw/audit.jsonl', 'sub/.claw/grants.json', '.claw', 'src/../.claw/server.json'])(
    'refuses %s',
    async (relative) => {
      expect(await state(relative)).toBe(true);
      const error = await resolveReadableFile(workspace, relative).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProtectedPathError);
      expect((error as ProtectedPathError).reason).toBe(clawStateReason);
    },
  );

  it('lets the settings files and ordinary files through', async () => {
    expect(await state('.claw/config.json')).toBe(false);
    expect(await state('sub/.claw/mcp.json')).toBe(false);
    expect(await state('README.md')).toBe(false);
    expect((await resolveReadableFile(workspace, '.claw/config.json')).realPath).toBe(path.join(workspace, '.claw/config.json'));
  });

  it('follows symlinks: a link elsewhere to a state file or into .claw is state; a link to a settings file is not', async () => {
    await symlink('.claw/grants.json', path.join(workspace, 'innocent.txt'));
    await symlink(path.join(workspace, 'sub/.claw'), path.join(workspace, 'state'));
    await symlink('.claw/config.json', path.join(workspace, 'settings.json'));
    expect(await state('innocent.txt')).toBe(true);
    expect(await state('state/grants.json')).toBe(true);
    expect(await state('state')).toBe(true);
    expect(await state('settings.json')).toBe(false);
  });

  it('treats the folder a linked .claw points to as the state folder', async () => {
    const linked = await realpath(await mkdtemp(path.join(os.tmpdir(), 'claw-secrets-linked-')));
    try {
      await rm(path.join(workspace, '.claw'), { recursive: true });
      await mkdir(path.join(workspace, 'kept'));
      await writeFile(path.join(workspace, 'kept/grants.json'), '{}');
      await writeFile(path.join(workspace, 'kept/config.json'), '{}');
      await symlink('kept', path.join(workspace, '.claw'));
      expect(await state('kept/grants.json')).toBe(true);
      expect(await state('kept')).toBe(true);
      expect(await state('kept/config.json')).toBe(false);
      expect(await outcome(resolveWritableFile(workspace, 'kept/grants.json'))).toBe('protected_path');
      // A .claw linked out of the workspace puts nothing of the workspace into the state.
      await rm(path.join(workspace, '.claw'));
      await symlink(linked, path.join(workspace, '.claw'));
      expect(await state('kept/grants.json')).toBe(false);
    } finally {
      await rm(linked, { recursive: true, force: true });
    }
  });
});

describe('writes into a .claw folder at any depth (TRUST-4)', () => {
  it.each(['sub/.claw/grants.json', 'sub/.claw/new.json', 'a/b/.CLAW/x', 'sub/.claw/config.json', '.claw/config.json'])(
    'resolveWritableFile refuses %s',
    async (relative) => {
      expect(await outcome(resolveWritableFile(workspace, relative))).toBe('protected_path');
    },
  );

  it('refuses it on the real path too, and still allows look-alikes', async () => {
    await symlink('sub/.claw', path.join(workspace, 'alias'));
    expect(await outcome(resolveWritableFile(workspace, 'alias/grants.json'))).toBe('protected_path');
    expect(await outcome(resolveWritableFile(workspace, 'docs/.claw-notes.md'))).toBe('accepted');
  });

  it('the bash fence for unisolated commands names nested .claw folders too', () => {
    expect(checkProtectedPaths('cat sub/.claw/grants.json')).toContain('.claw');
    expect(checkProtectedPaths('echo x > a/b/.claw/config.json')).toContain('.claw');
    expect(checkProtectedPaths('cat docs/.claw-notes.md')).toBeUndefined();
  });
});

describe('verifyOpenedFile refuses claw\'s state by what was opened (TRUST-4)', () => {
  for (const [kind, files] of [['the workspace\'s calls', undefined], ['pooled calls', pooledFiles]] as const) {
    it(`${kind}: a state file is refused, a settings file is not`, async () => {
      const calls = files ?? (await workspaceFiles(workspace));
      const check = async (relative: string) => {
        const handle = await calls.openForReading(path.join(workspace, relative));
        try {
          const options = { workDir: workspace, path: relative, realRoot: workspace, files: calls };
          return await outcome(verifyOpenedFile(handle, options));
        } finally {
          await handle.close();
        }
      };
      expect(await check('.claw/grants.json')).toBe('protected_path');
      expect(await check('sub/.claw/grants.json')).toBe('protected_path');
      expect(await check('.claw/config.json')).toBe('accepted');
    });
  }

  it('a hard link to a state file has no name in .claw, but is refused for its two links', async () => {
    await link(path.join(workspace, '.claw/grants.json'), path.join(workspace, 'copy.json'));
    expect(await isClawState(await locateWithinWorkspace(workspace, 'copy.json'))).toBe(false);
    const handle = await pooledFiles.openForReading(path.join(workspace, 'copy.json'));
    try {
      expect(await outcome(verifyOpenedFile(handle, { workDir: workspace, path: 'copy.json' }))).toBe('unsafe_file');
    } finally {
      await handle.close();
    }
  });
});
