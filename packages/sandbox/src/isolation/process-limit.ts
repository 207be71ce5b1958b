import { mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { IsolationUnavailableError } from './errors.js';

/**
 * How the process limit of the sandbox is enforced.
 *
 * - `rlimit`: `ulimit -u` (RLIMIT_NPROC) set inside the sandbox, after bubblewrap created the user
 *   namespace. The kernel counts processes per real uid and, since Linux 5.14, per user namespace
 *   too, so set there it caps the sandbox's own processes rather than all processes of the user
 *   (on older kernels it counts every process of the uid). bash's builtin is used rather than
 *   `prlimit`, since bash is needed anyway and util-linux may be missing.
 * - `cgroup`: the kernel never applies RLIMIT_NPROC to root (uid 0 outside the sandbox), so when
 *   claw runs as root each command gets its own cgroup with `pids.max` (v1 or v2), joined before
 *   bubblewrap starts and removed once the command is gone. The folder it is made in is found and
 *   checked once, when the spawner is created; per command only the leaf is made.
 * - `none`: running as root and no pids cgroup could be created; nothing caps the count.
 *
 * Only `rlimit` needs the `ulimit -u` step inside the sandbox: RLIMIT_NPROC never binds root.
 */
export type ProcessLimitEnforcement = 'rlimit' | 'cgroup' | 'none';

/** A cgroup made for one command. */
export interface CommandCgroup {
  /** The cgroup's `cgroup.procs`: writing a pid here moves that process into the cgroup. */
  readonly procsFile: string;
  /**
   * The file the launcher writes `0` (itself) to, to join the cgroup before it becomes
   * bubblewrap: `tasks` on v1, `cgroup.procs` on v2. On v1, a thread moving itself through
   * `tasks` skips the kernel's global lock for moving whole processes, whose write side waits
   * for an RCU grace period (measured: 5 to 15 ms per command); the launcher has one thread, so
   * that moves all of it. v2 has no such path for a domain cgroup and keeps `cgroup.procs`.
   */
  readonly joinFile: string;
  /** Removes the cgroup once it is empty; safe to call more than once. */
  release(): void;
}

/** The process limit of a spawner. */
export interface ProcessLimit {
  readonly maxProcesses: number;
  readonly enforcement: ProcessLimitEnforcement;
  /** A few words for the spawner's description. */
  readonly summary: string;
  /** For `cgroup`, a fresh cgroup for the next command; otherwise undefined. */
  acquire(): CommandCgroup | undefined;
}

const cgroupPrefix = 'claw-sandbox-';
let cgroupSequence = 0;

/**
 * Decides how `maxProcesses` is enforced: RLIMIT_NPROC when not root, a pids cgroup per command
 * when root and one can be made under this process's own cgroup, else nothing (the summary says
 * so). `procRoot` is for tests.
 */
export async function prepareProcessLimit(
  maxProcesses: number,
  options: { isRoot: boolean; procRoot?: string },
): Promise<ProcessLimit> {
  if (!options.isRoot) {
    return fixedLimit(maxProcesses, 'rlimit', `at most ${maxProcesses} processes`);
  }
  const procRoot = options.procRoot ?? '/proc';
  let reason: string;
  try {
    const [cgroupText, mountInfoText] = await Promise.all([
      readFile(path.join(procRoot, 'self/cgroup'), 'utf8'),
      readFile(path.join(procRoot, 'self/mountinfo'), 'utf8'),
    ]);
    const location = locatePidsCgroup(cgroupText, mountInfoText);
    if (location === undefined) {
      reason = 'no pids cgroup controller is mounted';
    } else {
      reason = await prepareCgroupFolder(location);
      if (reason === '') return new CgroupProcessLimit(location, maxProcesses);
    }
  } catch (error) {
    reason = `cannot read the cgroups of this process (${describeError(error)})`;
  }
  return fixedLimit(
    maxProcesses,
    'none',
    `process limit NOT enforced (running as root, which RLIMIT_NPROC exempts, and ${reason})`,
  );
}

function fixedLimit(
  maxProcesses: number,
  enforcement: ProcessLimitEnforcement,
  summary: string,
): ProcessLimit {
  return { maxProcesses, enforcement, summary, acquire: () => undefined };
}

/** Where this process's cgroup for the pids controller is, as a folder of the mounted hierarchy. */
export interface PidsCgroupLocation {
  version: 1 | 2;
  folder: string;
}

/**
 * Finds this process's pids cgroup folder from `/proc/self/cgroup` and `/proc/self/mountinfo`: a
 * v1 hierarchy with the pids controller when there is one, else the v2 (unified) hierarchy.
 */
export function locatePidsCgroup(
  cgroupText: string,
  mountInfoText: string,
): PidsCgroupLocation | undefined {
  const memberships = cgroupText
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const first = line.indexOf(':');
      const second = line.indexOf(':', first + 1);
      return {
        controllers: line.slice(first + 1, second).split(','),
        cgroup: line.slice(second + 1),
        unified: line.startsWith('0::'),
      };
    });
  const mounts = parseMountInfo(mountInfoText);
  const v1 = memberships.find((entry) => !entry.unified && entry.controllers.includes('pids'));
  if (v1 !== undefined) {
    const mount = mounts.find(
      (entry) => entry.fsType === 'cgroup' && entry.superOptions.split(',').includes('pids'),
    );
    const folder = mount === undefined ? undefined : folderOf(mount, v1.cgroup);
    return folder === undefined ? undefined : { version: 1, folder };
  }
  const v2 = memberships.find((entry) => entry.unified);
  const mount = mounts.find((entry) => entry.fsType === 'cgroup2');
  if (v2 === undefined || mount === undefined) return undefined;
  const folder = folderOf(mount, v2.cgroup);
  return folder === undefined ? undefined : { version: 2, folder };
}

interface MountEntry {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string;
}

/**
 * Fields of /proc/self/mountinfo:
 * id parent dev root mountpoint options [tags...] - type source superoptions.
 */
function parseMountInfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 6) continue;
    entries.push({
      root: unescapeMountField(fields[3] ?? ''),
      mountPoint: unescapeMountField(fields[4] ?? ''),
      fsType: fields[separator + 1] ?? '',
      superOptions: fields[separator + 3] ?? '',
    });
  }
  return entries;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_match, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}

/** The folder of `cgroup` in a hierarchy mounted with `mount.root` at `mount.mountPoint`. */
function folderOf(mount: MountEntry, cgroup: string): string | undefined {
  const relative = path.posix.relative(mount.root, cgroup);
  if (relative.split('/')[0] === '..') return undefined;
  return path.posix.join(mount.mountPoint, relative);
}

/**
 * Makes sure per-command cgroups can be made under `location.folder` with a working `pids.max`,
 * and removes those that processes of claw no longer running left behind. Returns '' when ready,
 * else why not.
 */
async function prepareCgroupFolder(location: PidsCgroupLocation): Promise<string> {
  const { folder } = location;
  if (location.version === 2) {
    const controllers = await readFile(path.join(folder, 'cgroup.controllers'), 'utf8')
      .catch(() => '');
    if (!controllers.split(/\s+/).includes('pids')) {
      return `the pids controller is not enabled for the cgroup ${folder}`;
    }
    const enabled = await readFile(path.join(folder, 'cgroup.subtree_control'), 'utf8')
      .catch(() => '');
    if (!enabled.split(/\s+/).includes('pids')) {
      // pids is a threaded controller: enabling it below a cgroup that holds processes is allowed.
      try {
        await writeFile(path.join(folder, 'cgroup.subtree_control'), '+pids');
      } catch (error) {
        return `the pids controller cannot be enabled below ${folder} (${describeError(error)})`;
      }
    }
  }
  removeAbandonedCgroups(folder);
  const trial = path.join(folder, `${cgroupPrefix}${process.pid}-probe`);
  try {
    await mkdir(trial);
    await writeFile(path.join(trial, 'pids.max'), '8');
  } catch (error) {
    await rmdir(trial).catch(() => undefined);
    return `no cgroup with a process limit can be created in ${folder} (${describeError(error)})`;
  }
  await rmdir(trial).catch(() => undefined);
  return '';
}

/** Removes `claw-sandbox-<pid>-*` cgroups whose pid is gone. rmdir fails on a cgroup in use. */
function removeAbandonedCgroups(folder: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^claw-sandbox-(\d+)-/.exec(name);
    const owner = Number(match?.[1]);
    if (match === null || owner === process.pid || isAlive(owner)) continue;
    try {
      rmdirSync(path.join(folder, name));
    } catch {
      // In use or already gone.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

class CgroupProcessLimit implements ProcessLimit {
  readonly enforcement = 'cgroup';
  readonly summary: string;
  private readonly folder: string;
  private readonly joinFileName: string;
  // One more than asked: bubblewrap's own monitor process sits in the cgroup too.
  private readonly pidsMax: string;

  constructor(location: PidsCgroupLocation, readonly maxProcesses: number) {
    this.folder = location.folder;
    this.joinFileName = location.version === 1 ? 'tasks' : 'cgroup.procs';
    this.pidsMax = String(maxProcesses + 1);
    this.summary = `at most ${maxProcesses} processes (pids cgroup)`;
  }

  acquire(): CommandCgroup {
    cgroupSequence += 1;
    const folder = path.join(this.folder, `${cgroupPrefix}${process.pid}-${cgroupSequence}`);
    try {
      mkdirSync(folder);
      writeFileSync(path.join(folder, 'pids.max'), this.pidsMax);
    } catch (error) {
      try {
        rmdirSync(folder);
      } catch {
        // Never made.
      }
      const reason = `could not create the cgroup that limits the command's processes: ${describeError(error)}`;
      throw new IsolationUnavailableError(
        `${reason}. Check that ${this.folder} is still writable, or run claw as a user other than root.`,
        { reason, cause: error },
      );
    }
    return {
      procsFile: path.join(folder, 'cgroup.procs'),
      joinFile: path.join(folder, this.joinFileName),
      release: removeWhenEmpty(folder),
    };
  }
}

/** rmdir of a cgroup fails with EBUSY until its last process is gone: retry for a while. */
function removeWhenEmpty(folder: string): () => void {
  let started = false;
  return () => {
    if (started) return;
    started = true;
    let attempts = 0;
    const attempt = (): void => {
      try {
        rmdirSync(folder);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        attempts += 1;
        if (code === 'EBUSY' && attempts < 250) setTimeout(attempt, 20).unref();
      }
    };
    attempt();
  };
}

function describeError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}
