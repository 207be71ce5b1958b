import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PerWorkspace } from '../src/per-workspace.js';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

describe('PerWorkspace (the MCP servers and A2A tools of a workspace, once per factory)', () => {
  it('makes one value per real folder, whatever the spelling, and keeps it', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'claw-per-workspace-'));
    folders.push(folder);
    const link = `${folder}-link`;
    await symlink(folder, link);
    folders.push(link);
    const made: string[] = [];
    const values = new PerWorkspace(async (root) => {
      made.push(root);
      return { root };
    });
    const first = await values.get(folder);
    expect(await values.get(link)).toBe(first);
    expect(await values.get(`${folder}/.`)).toBe(first);
    expect(made).toHaveLength(1);
    expect(values.all()).toHaveLength(1);
  });

  it('does not keep a value that failed: the next get makes it again', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'claw-per-workspace-'));
    folders.push(folder);
    let attempts = 0;
    const values = new PerWorkspace(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('broken config');
      return attempts;
    });
    await expect(values.get(folder)).rejects.toThrow('broken config');
    expect(await values.get(folder)).toBe(2);
    expect(await values.get(folder)).toBe(2);
  });
});
