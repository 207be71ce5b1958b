import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ClawError } from '@claw/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEditFileTool, createReadFileTool, createWriteFileTool } from '../../src/tools/index.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

async function failure(promise: Promise<unknown>): Promise<ClawError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ClawError);
  return outcome.error as ClawError;
}

describe('hardened file tools', () => {
  let ws: TempWorkspace;
  const read = createReadFileTool();
  const write = createWriteFileTool();
  const edit = createEditFileTool();

  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    await ws.remove();
  });

  describe('a hard link to a file outside the workspace', () => {
    beforeEach(async () => {
      await writeFile(join(ws.outside, 'shadow'), 'root:SECRET-HASH\n');
      await link(join(ws.outside, 'shadow'), join(ws.workDir, 'innocent.txt'));
    });

    it('is not read', async () => {
      const error = await failure(read.execute({ path: 'innocent.txt' }, ws.context()));
      expect(error.code).toBe('unsafe_file');
      expect(error.message).toContain('2 hard links');
      expect(error.message).not.toContain('SECRET');
    });

    it('is not edited, and the outside file stays as it was', async () => {
      const error = await failure(
        edit.execute({ path: 'innocent.txt', old_string: 'SECRET-HASH', new_string: 'pwned' }, ws.context()),
      );
      expect(error.code).toBe('unsafe_file');
      expect(await readFile(join(ws.outside, 'shadow'), 'utf8')).toBe('root:SECRET-HASH\n');
    });

    it('is not overwritten', async () => {
      const error = await failure(write.execute({ path: 'innocent.txt', content: 'x' }, ws.context()));
      expect(error.code).toBe('unsafe_file');
      expect(await readFile(join(ws.outside, 'shadow'), 'utf8')).toBe('root:SECRET-HASH\n');
    });
  });

  describe('protected paths', () => {
    beforeEach(async () => {
      await mkdir(join(ws.workDir, '.claw'), { recursive: true });
      await mkdir(join(ws.workDir, '.git/hooks'), { recursive: true });
      await writeFile(join(ws.workDir, '.claw/grants.json'), '{"version":1,"grants":[]}');
      await writeFile(join(ws.workDir, '.git/config'), '[core]\n');
      await symlink('.claw', join(ws.workDir, 'alias'));
    });

    for (const path of [
      '.claw/grants.json',
      '.claw/sessions/default.jsonl',
      '.CLAW/grants.json',
      './.claw/../.claw/grants.json',
      'alias/grants.json',
      '.git/hooks/pre-commit',
      '.git/config',
    ]) {
      it(`write_file refuses ${path}`, async () => {
        const error = await failure(write.execute({ path, content: '#!/bin/sh\nevil\n' }, ws.context()));
        expect(error.code).toBe('protected_path');
        expect(await readFile(join(ws.workDir, '.claw/grants.json'), 'utf8')).toBe('{"version":1,"grants":[]}');
      });
    }

    it('edit_file refuses .git/config and .claw/grants.json', async () => {
      for (const [path, text] of [
        ['.git/config', '[core]'],
        ['.claw/grants.json', '[]'],
      ] as const) {
        const error = await failure(edit.execute({ path, old_string: text, new_string: 'x' }, ws.context()));
        expect(error.code).toBe('protected_path');
      }
      expect(await readFile(join(ws.workDir, '.git/config'), 'utf8')).toBe('[core]\n');
    });

    it('reading them is allowed', async () => {
      const result = await read.execute({ path: '.git/config' }, ws.context());
      expect(result).toEqual({ content: '[core]' });
    });

    it('a look-alike name is not protected', async () => {
      const result = await write.execute({ path: 'docs/.claw-notes.md', content: 'ok' }, ws.context());
      expect(result.isError).toBeUndefined();
    });
  });
});
