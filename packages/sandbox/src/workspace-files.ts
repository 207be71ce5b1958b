import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { open, readFile, readlink, realpath } from 'node:fs/promises';
import nodePath from 'node:path';
import { isInside } from './resolve.js';

/** A file opened for reading: a `FileHandle` of `fs/promises`, or one opened directly. */
export interface OpenFile {
  readonly fd: number;
  stat(): Promise<Stats>;
  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}

/**
 * The file calls the file tools and the policy make in one workspace. `direct` ones are
 * synchronous: on a local file system a `realpath` or a small read answers in microseconds,
 * where a round trip through libuv's thread pool costs tens (PERF-1: several per tool call).
 * They are used only where they cannot stall the process: on Linux, when the workspace is on a
 * local kind of file system and the machine mounts nothing that can stall (`isLocalWorkspace`).
 * On a network or FUSE file system a call can hang, and there it must block a pool thread, never
 * the event loop (a hung call then still lets timers, cancellation and output go on).
 */
export interface WorkspaceFiles {
  readonly direct: boolean;
  realpath(path: string): Promise<string>;
  readlink(path: string): Promise<string>;
  /** Opens with `O_NONBLOCK` added: opening a FIFO must not wait for a writer. */
  openForReading(path: string): Promise<OpenFile>;
}

const readFlags = constants.O_RDONLY | constants.O_NONBLOCK;

/** The calls through libuv's thread pool (`fs/promises`). */
export const pooledFiles: WorkspaceFiles = {
  direct: false,
  realpath: (path) => realpath(path),
  readlink: (path) => readlink(path),
  openForReading: (path) => open(path, readFlags),
};

/** Runs a synchronous call; its result or error comes as a promise, like a pooled call's. */
async function now<T>(call: () => T): Promise<T> {
  return call();
}

class DirectFile implements OpenFile {
  constructor(readonly fd: number) {}

  stat(): Promise<Stats> {
    return now(() => fstatSync(this.fd));
  }

  read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
  ): Promise<{ bytesRead: number }> {
    return now(() => ({ bytesRead: readSync(this.fd, buffer, offset, length, position) }));
  }

  close(): Promise<void> {
    return now(() => closeSync(this.fd));
  }
}

/**
 * For a file opened by direct calls: its `fstat`, and on Linux where `/proc/self/fd/N` says it is
 * (undefined when that cannot be read), asked for without waiting. Undefined for other handles.
 */
export function inspectDirectly(
  handle: OpenFile,
): { info: Stats; procLink: string | undefined } | undefined {
  if (!(handle instanceof DirectFile)) return undefined;
  const info = fstatSync(handle.fd);
  if (process.platform !== 'linux') return { info, procLink: undefined };
  let procLink: string | undefined;
  try {
    procLink = readlinkSync(`/proc/self/fd/${handle.fd}`);
  } catch {
    procLink = undefined;
  }
  return { info, procLink };
}

const direct: WorkspaceFiles = {
  direct: true,
  realpath: (path) => now(() => realpathSync.native(path)),
  readlink: (path) => now(() => readlinkSync(path)),
  openForReading: (path) => now(() => new DirectFile(openSync(path, readFlags))),
};

/**
 * Kinds of file system on local storage (or memory), whose calls do not wait on a network or a
 * user-space server (`/proc/self/mountinfo` names them).
 */
export const localFileSystems: ReadonlySet<string> = new Set([
  'bcachefs',
  'btrfs',
  'exfat',
  'ext2',
  'ext3',
  'ext4',
  'f2fs',
  'jfs',
  'nilfs2',
  'ntfs3',
  'overlay',
  'ramfs',
  'reiserfs',
  'tmpfs',
  'vfat',
  'xfs',
  'zfs',
]);

/** Mount points and kinds, from the text of `/proc/self/mountinfo`. */
export function parseMountInfo(text: string): Array<{ mountPoint: string; type: string }> {
  const mounts: Array<{ mountPoint: string; type: string }> = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    const mountPoint = fields[4];
    const type = fields[separator + 1];
    if (separator < 6 || mountPoint === undefined || type === undefined) continue;
    // Spaces, tabs, newlines and backslashes in a path are written as octal escapes.
    const unescaped = mountPoint.replace(/\\([0-7]{3})/g, (_, code: string) =>
      String.fromCharCode(Number.parseInt(code, 8)),
    );
    mounts.push({ mountPoint: unescaped, type });
  }
  return mounts;
}

/**
 * The kernel's own file systems: their calls answer from memory and never wait on a network or
 * a user-space server either. (`autofs` is not one: a lookup can mount a network share.)
 */
export const kernelFileSystems: ReadonlySet<string> = new Set([
  'binfmt_misc',
  'bpf',
  'cgroup',
  'cgroup2',
  'configfs',
  'debugfs',
  'devpts',
  'devtmpfs',
  'efivarfs',
  'fusectl',
  'hugetlbfs',
  'mqueue',
  'nsfs',
  'proc',
  'pstore',
  'securityfs',
  'selinuxfs',
  'squashfs',
  'sysfs',
  'tracefs',
]);

/**
 * True when direct calls in the workspace at `realRoot` cannot stall: the file system that holds
 * it is a local kind (the deepest mount point at or above the root holds it), and no mount of
 * the whole table is of a kind that can (a network file system, FUSE, autofs, anything not
 * known). The whole table counts, not only the workspace: a symlink in the workspace may lead
 * anywhere, and resolving it walks there (the path is refused afterwards, but the walk happens).
 */
export function isLocalWorkspace(
  mounts: ReadonlyArray<{ mountPoint: string; type: string }>,
  realRoot: string,
): boolean {
  let holder: { mountPoint: string; type: string } | undefined;
  for (const mount of mounts) {
    if (!localFileSystems.has(mount.type) && !kernelFileSystems.has(mount.type)) return false;
    if (!isInside(mount.mountPoint, realRoot)) continue;
    const deeper = holder === undefined || mount.mountPoint.length >= holder.mountPoint.length;
    if (deeper) holder = mount;
  }
  return holder !== undefined && localFileSystems.has(holder.type);
}

/** How long an answer about a workspace's mounts is used before the mount table is read again. */
const recheckMs = 5_000;
interface KnownFiles {
  files: Promise<WorkspaceFiles>;
  /** What `files` resolved to, once it has. */
  answer?: WorkspaceFiles;
  checkedAt: number;
}
const known = new Map<string, KnownFiles>();
const maxKnown = 64;

/**
 * The answer `workspaceFiles(realRoot)` would give, when it is already known and still fresh:
 * the caller need not wait for it. Undefined otherwise (ask `workspaceFiles`).
 */
export function knownWorkspaceFiles(realRoot: string): WorkspaceFiles | undefined {
  return freshEntry(realRoot, Date.now())?.answer;
}

/** What is known of the workspace at `realRoot`, unless it is older than `recheckMs` at `at`. */
function freshEntry(realRoot: string, at: number): KnownFiles | undefined {
  const entry = known.get(realRoot);
  return entry !== undefined && at - entry.checkedAt < recheckMs ? entry : undefined;
}

/**
 * The file calls for the workspace whose real root is `realRoot`: direct where they cannot stall
 * (Linux, see `isLocalWorkspace`), else through the thread pool. The mount table is read again
 * every few seconds, so a network file system mounted later is seen; the calls that ask
 * meanwhile share that one read.
 */
export function workspaceFiles(realRoot: string): Promise<WorkspaceFiles> {
  if (process.platform !== 'linux') return Promise.resolve(pooledFiles);
  const at = Date.now();
  const seen = freshEntry(realRoot, at);
  if (seen !== undefined) return seen.files;
  const root = nodePath.resolve(realRoot);
  const files = readFile('/proc/self/mountinfo', 'utf8').then(
    (text) => (isLocalWorkspace(parseMountInfo(text), root) ? direct : pooledFiles),
    // No mount table: every call goes through the pool.
    () => pooledFiles,
  );
  const entry: KnownFiles = { files, checkedAt: at };
  void files.then((answer) => {
    entry.answer = answer;
  });
  known.delete(realRoot);
  known.set(realRoot, entry);
  if (known.size > maxKnown) known.delete(known.keys().next().value as string);
  return files;
}
