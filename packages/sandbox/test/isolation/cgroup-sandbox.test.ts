import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCommandSpawner, probeIsolation, type CommandSpawner } from '../../src/index.js';
import { locatePidsCgroup } from '../../src/isolation/process-limit.js';
import {
  findHostProcesses,
  killGroup,
  runCommand,
  uniqueSleepSeconds,
  useTempDirs,
  waitFor,
} from './helpers.js';

// As root, RLIMIT_NPROC does not bind, and each command gets its own pids cgroup (when one can be
// made here). These tests look at the real cgroups from the host side.
const { available } = await probeIsolation();
const spawner = available && process.getuid?.() === 0
  ? await createCommandSpawner({ isolation: 'required', maxProcesses: 24 })
  : undefined;
const cgroupLimited = spawner?.description.includes('(pids cgroup)') === true;
const { makeTempDir } = useTempDirs();

const mountInfo = (): string => readFileSync('/proc/self/mountinfo', 'utf8');

/** The pids cgroup folder of a host process. */
function pidsFolderOf(pid: number | 'self'): string | undefined {
  return locatePidsCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8'), mountInfo())?.folder;
}

function isolated(): CommandSpawner {
  if (spawner === undefined) throw new Error('no isolated spawner here');
  return spawner;
}

function commandLeaves(folder: string): string[] {
  return readdirSync(folder).filter((name) => new RegExp(`^claw-sandbox-${process.pid}-\\d+$`).test(name));
}

describe.skipIf(!cgroupLimited)('the pids cgroup of each command (root)', () => {
  it('holds the command below claw\'s own cgroup with pids.max, and is removed after it', async () => {
    const workDir = await makeTempDir();
    const own = pidsFolderOf('self') ?? '';
    const seconds = uniqueSleepSeconds();
    let leaf: string | undefined;
    let pidsMax = '';
    const result = await runCommand(isolated(), `sleep ${seconds}`, workDir, {
      onStart: (child) => {
        void waitFor(() => findHostProcesses(['sleep', seconds]), (pids) => pids.length > 0)
          .then(([pid]) => {
            leaf = pid === undefined ? undefined : pidsFolderOf(pid);
            if (leaf !== undefined) pidsMax = readFileSync(`${leaf}/pids.max`, 'utf8');
            killGroup(child);
          });
      },
    });
    expect(result.signal).toBe('SIGKILL');
    expect(leaf).toBeDefined();
    expect(leaf?.startsWith(`${own}/`)).toBe(true);
    expect(leaf?.slice(own.length + 1)).toMatch(new RegExp(`^claw-sandbox-${process.pid}-\\d+$`));
    // One more than asked, for bubblewrap's monitor process.
    expect(pidsMax).toBe('25\n');
    expect(await waitFor(() => existsSync(leaf ?? ''), (exists) => !exists)).toBe(false);
  });

  it('leaves no leaf behind after a run of commands', async () => {
    const workDir = await makeTempDir();
    const own = pidsFolderOf('self') ?? '';
    for (let index = 0; index < 4; index += 1) {
      expect((await runCommand(isolated(), 'true', workDir)).exitCode).toBe(0);
    }
    expect(await waitFor(() => commandLeaves(own), (names) => names.length === 0)).toEqual([]);
  });
});
