import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadInstructions, maxInstructionBytes } from '../src/index.js';
import { cleanUp, tempWorkspace } from './helpers.js';

afterEach(cleanUp);

async function file(path: string, text: string | Buffer): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text);
}

describe('loadInstructions (REAL-2)', () => {
  it('reads the user\'s file, then each AGENTS.md from the repository root down to the workspace', async () => {
    const root = await tempWorkspace('claw-instructions-');
    const home = join(root, 'home');
    await file(join(home, '.config/claw/AGENTS.md'), 'user rules\n');
    await file(join(root, 'repo/AGENTS.md'), 'repo rules\n');
    await file(join(root, 'repo/packages/AGENTS.md'), 'packages rules\n');
    await file(join(root, 'repo/packages/app/AGENTS.md'), 'app rules\n');
    // Beside the path and below the workspace: not read.
    await file(join(root, 'repo/docs/AGENTS.md'), 'docs rules\n');
    await file(join(root, 'repo/packages/app/src/AGENTS.md'), 'src rules\n');
    const workDir = join(root, 'repo/packages/app');
    const loaded = await loadInstructions({
      workDir,
      repositoryRoot: join(root, 'repo'),
      userConfigDir: join(home, '.config/claw'),
      homeDir: home,
    });
    expect(loaded.files.map((each) => [each.path, each.text, each.bytes])).toEqual([
      ['~/.config/claw/AGENTS.md', 'user rules\n', 11],
      ['../../AGENTS.md', 'repo rules\n', 11],
      ['../AGENTS.md', 'packages rules\n', 15],
      ['AGENTS.md', 'app rules\n', 10],
    ]);
    expect(loaded.warnings).toEqual([]);
  });

  it('reads only the workspace\'s own file outside a repository, and nothing when there is none', async () => {
    const workDir = await tempWorkspace('claw-instructions-');
    expect(await loadInstructions({ workDir })).toEqual({ files: [], warnings: [] });
    await file(join(workDir, 'AGENTS.md'), 'rules');
    const loaded = await loadInstructions({ workDir, repositoryRoot: join(workDir, 'elsewhere') });
    expect(loaded.files.map((each) => each.path)).toEqual(['AGENTS.md']);
  });

  it('keeps 32 KiB in all: the file that crosses it is cut at a line end, later ones are left out', async () => {
    const workDir = await tempWorkspace('claw-instructions-');
    const user = join(workDir, 'user');
    const line = `${'x'.repeat(99)}\n`;
    await file(join(user, 'AGENTS.md'), line.repeat(200)); // 20,000 bytes
    await file(join(workDir, 'repo/AGENTS.md'), line.repeat(200)); // crosses the limit
    await file(join(workDir, 'repo/sub/AGENTS.md'), 'never read\n');
    const loaded = await loadInstructions({
      workDir: join(workDir, 'repo/sub'),
      repositoryRoot: join(workDir, 'repo'),
      userConfigDir: user,
    });
    expect(loaded.files.map((each) => each.path)).toEqual([join(user, 'AGENTS.md'), '../AGENTS.md']);
    const total = loaded.files.reduce((sum, each) => sum + each.bytes, 0);
    expect(total).toBeLessThanOrEqual(maxInstructionBytes);
    const cut = loaded.files[1];
    expect(cut?.truncated).toBe(true);
    // Whole lines only: (32,768 − 20,000) bytes hold 127 lines of 100.
    expect(cut?.bytes).toBe(12_700);
    expect(cut?.text.endsWith('\n')).toBe(true);
    expect(loaded.warnings).toEqual([
      'instructions: ../AGENTS.md cut after 12 KB: project instructions are limited to 32 KB in all',
      'instructions: AGENTS.md left out: project instructions are limited to 32 KB in all',
    ]);
  });

  it('cuts a file without line ends between whole UTF-8 characters', async () => {
    const workDir = await tempWorkspace('claw-instructions-');
    await file(join(workDir, 'AGENTS.md'), 'é'.repeat(10)); // 20 bytes, 2 each
    const loaded = await loadInstructions({ workDir, maxBytes: 7 });
    expect(loaded.files[0]).toMatchObject({ text: 'ééé', bytes: 6, truncated: true });
  });

  it('skips a binary, a non-UTF-8, an unreadable file and a folder, each with a warning, and goes on', async () => {
    const workDir = await tempWorkspace('claw-instructions-');
    const user = join(workDir, 'user');
    await file(join(user, 'AGENTS.md'), Buffer.from([0x23, 0x20, 0x00, 0x01]));
    await file(join(workDir, 'repo/AGENTS.md'), Buffer.from([0x23, 0xff, 0xfe, 0x0a]));
    await mkdir(join(workDir, 'repo/a/AGENTS.md'), { recursive: true });
    // A link to itself cannot be opened, whoever runs the test (root reads any mode).
    await mkdir(join(workDir, 'repo/a/b'), { recursive: true });
    await symlink('AGENTS.md', join(workDir, 'repo/a/b/AGENTS.md'));
    await file(join(workDir, 'repo/a/b/c/AGENTS.md'), 'the good one\n');
    const loaded = await loadInstructions({
      workDir: join(workDir, 'repo/a/b/c'),
      repositoryRoot: join(workDir, 'repo'),
      userConfigDir: user,
    });
    expect(loaded.files.map((each) => each.text)).toEqual(['the good one\n']);
    expect(loaded.warnings).toEqual([
      `instructions: ${join(user, 'AGENTS.md')} skipped: it is not text (it holds NUL bytes)`,
      'instructions: ../../../AGENTS.md skipped: it is not UTF-8 text',
      'instructions: ../../AGENTS.md skipped: it is not a file',
      'instructions: ../AGENTS.md skipped: it cannot be read (ELOOP)',
    ]);
  });
});
