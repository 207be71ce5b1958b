import * as fs from 'node:fs/promises';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ClawUserError } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { serverFiles, writeServerFiles, type ServerFileSystem } from '../src/server-files.js';

const folders: string[] = [];

afterEach(async () => {
  for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
});

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-server-files-'));
  folders.push(made);
  return made;
}

/** The real file system, except that writing a file under `full` fails as on a full disk. */
function fullUnder(full: string): ServerFileSystem {
  const noSpace = (): Error =>
    Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  return {
    mkdir: fs.mkdir,
    chmod: fs.chmod,
    rename: fs.rename,
    unlink: fs.unlink,
    open: async (file, flags, mode) => {
      const handle = await fs.open(file, flags, mode);
      if (!file.startsWith(full)) return handle;
      return {
        writeFile: () => Promise.reject(noSpace()),
        sync: () => handle.sync(),
        close: () => handle.close(),
      };
    },
  };
}

describe('the files of a listening server on a full disk (LIFE-3)', () => {
  it('a server.json that cannot be written is a warning naming the file and what is full; the token file is written', async () => {
    const workspace = await folder();
    const state = await folder();
    const files = await serverFiles({ workspace, env: { XDG_STATE_HOME: state } });
    const warnings: string[] = [];
    await writeServerFiles(
      files,
      { tcp: 1234, http: 5678, generated: 'a-generated-token-of-some-length' },
      { warn: (line) => warnings.push(line), fileSystem: fullUnder(workspace) },
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(files.record);
    expect(warnings[0]).toContain('no space left on the device: free some space');
    expect(warnings[0]).toContain('TCP port 1234 and HTTP port 5678');
    expect(JSON.parse(await readFile(files.tokenFile, 'utf8'))).toMatchObject({ tcp: 1234, http: 5678 });
    // Nothing half-written is left behind: no server.json, no temporary file.
    expect((await fs.readdir(path.dirname(files.record))).filter((name) => name.startsWith('server.json'))).toEqual([]);
  });

  it('a token file that cannot be written stops the start, saying that the disk is full and what to do', async () => {
    const workspace = await folder();
    const state = await folder();
    const files = await serverFiles({ workspace, env: { XDG_STATE_HOME: state } });
    const failure = await writeServerFiles(
      files,
      { tcp: 1, http: 2, generated: 'a-generated-token-of-some-length' },
      { warn: () => undefined, fileSystem: fullUnder(state) },
    ).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(ClawUserError);
    expect((failure as Error).message).toContain(files.tokenFile);
    expect((failure as Error).message).toContain('no space left on the device: free some space');
    expect((failure as Error).message).toContain('free space there');
    expect((failure as Error).message).toContain('CLAW_SERVER_TOKEN');
  });
});
