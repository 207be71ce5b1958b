import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createReadFileTool, createWriteFileTool } from '../../src/tools/index.js';
import { createTempWorkspace, type TempWorkspace } from './workspace.js';

/**
 * A link in the workspace is flipped, atomically and in a tight loop in another process, between a
 * folder inside the workspace and a folder outside. Every read and write through it races the swap: the checks
 * before `open` pass on the real folder, and the descriptor check after `open` must catch the
 * link. No read may ever see the outside secret, and no write may ever land outside.
 */
describe('a symlink swapped between check and use', () => {
  let ws: TempWorkspace;
  let racer: ChildProcess | undefined;

  beforeEach(async () => {
    ws = await createTempWorkspace();
    await writeFile(join(ws.outside, 'secret.txt'), 'OUTSIDE-SECRET\n');
    await mkdir(join(ws.workDir, 'real'));
    await writeFile(join(ws.workDir, 'real/secret.txt'), 'inside\n');
    await symlink('real', join(ws.workDir, 'dir'));
  });
  /** Kills the racer and waits until it is gone, so it cannot touch the folder being removed. */
  async function stopRacer(): Promise<void> {
    const child = racer;
    racer = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  afterEach(async () => {
    await stopRacer();
    await ws.remove();
  });

  it('never leaks a read or a write, over many attempts', async () => {
    // Each flip renames a fresh link over `dir`, so `dir` always exists and always is a link.
    const flip = 'ln -sfn real in.tmp && mv -T in.tmp dir; ln -sfn "$2" out.tmp && mv -T out.tmp dir';
    racer = spawn('bash', ['-c', `cd "$1" && while :; do ${flip}; done`, 'racer', ws.workDir, ws.outside], {
      stdio: 'ignore',
    });
    const read = createReadFileTool();
    const write = createWriteFileTool();
    let readsInside = 0;
    let refused = 0;
    // At least 2.5 s of racing, and on until the race has gone both ways over 50 attempts: a busy
    // machine that runs the racer seldom gets more time, not a failure (15 s at most).
    const started = performance.now();
    const raced = (): boolean => attempt > 50 && readsInside > 0 && refused > 0;
    let attempt = 0;
    while (performance.now() - started < 2500 || (!raced() && performance.now() - started < 15_000)) {
      attempt += 1;
      const [readOutcome, writeOutcome] = await Promise.allSettled([
        read.execute({ path: 'dir/secret.txt' }, ws.context()),
        write.execute({ path: `dir/new-${attempt}.txt`, content: 'data' }, ws.context()),
      ]);
      if (readOutcome.status === 'fulfilled') {
        expect(readOutcome.value.content).not.toContain('OUTSIDE-SECRET');
        if (readOutcome.value.content === 'inside') readsInside += 1;
      } else {
        refused += 1;
      }
      if (writeOutcome.status === 'rejected') refused += 1;
    }
    await stopRacer();
    // Nothing was written outside, and nothing of ours is left there.
    expect(await readdir(ws.outside)).toEqual(['secret.txt']);
    // The race really happened both ways: some attempts saw the real folder, some were refused.
    expect(attempt).toBeGreaterThan(50);
    expect(readsInside).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 30_000);
});
