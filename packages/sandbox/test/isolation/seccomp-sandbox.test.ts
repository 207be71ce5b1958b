import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BubblewrapSpawner } from '../../src/isolation/bubblewrap-spawner.js';
import { defaultCommandEnvironment } from '../../src/isolation/environment.js';
import { createCommandSpawner, probeIsolation, type CommandSpawner } from '../../src/index.js';
import { runCommand, useTempDirs } from './helpers.js';

const probe = await probeIsolation();
const { makeTempDir } = useTempDirs();

const EPERM = 1;
const ENOSYS = 38;
const ENOTTY = 25;

// Syscall numbers per arch, written out from the kernel headers; args chosen so that, without the
// filter, most calls fail with an errno other than EPERM (or succeed harmlessly): that is what
// shows the EPERM comes from the filter.
const numbers = {
  x64: {
    ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, io_uring_setup: 425, io_uring_enter: 426,
    io_uring_register: 427, bpf: 321, perf_event_open: 298, keyctl: 250, add_key: 248, request_key: 249,
    userfaultfd: 323, kexec_load: 246, init_module: 175, finit_module: 313, delete_module: 176, mount: 165,
    umount2: 166, pivot_root: 155, unshare: 272, setns: 308, ioctl: 16, socket: 41, clone: 56, clone3: 435,
  },
  arm64: {
    ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, io_uring_setup: 425, io_uring_enter: 426,
    io_uring_register: 427, bpf: 280, perf_event_open: 241, keyctl: 219, add_key: 217, request_key: 218,
    userfaultfd: 282, kexec_load: 104, init_module: 105, finit_module: 273, delete_module: 106, mount: 40,
    umount2: 39, pivot_root: 41, unshare: 97, setns: 268, ioctl: 29, socket: 198, clone: 220, clone3: 435,
  },
}[process.arch === 'arm64' ? 'arm64' : 'x64'];

/** name → [syscall number, ...arguments] */
const calls: Record<string, number[]> = {
  ptrace: [numbers.ptrace, 3, 1, 0, 0], // PTRACE_PEEKUSER on pid 1
  process_vm_readv: [numbers.process_vm_readv, 1, 0, 0, 0, 0, 0],
  process_vm_writev: [numbers.process_vm_writev, 1, 0, 0, 0, 0, 0],
  io_uring_setup: [numbers.io_uring_setup, 0, 0],
  io_uring_enter: [numbers.io_uring_enter, -1, 0, 0, 0, 0, 0],
  io_uring_register: [numbers.io_uring_register, -1, 0, 0, 0],
  bpf: [numbers.bpf, 9999, 0, 0],
  perf_event_open: [numbers.perf_event_open, 0, 0, -1, -1, 0],
  keyctl: [numbers.keyctl, 0, -1, 0], // KEYCTL_GET_KEYRING_ID of the thread keyring
  add_key: [numbers.add_key, 0, 0, 0, 0, 0],
  request_key: [numbers.request_key, 0, 0, 0, 0],
  userfaultfd: [numbers.userfaultfd, 1], // UFFD_USER_MODE_ONLY
  kexec_load: [numbers.kexec_load, 0, 0, 0, 0],
  init_module: [numbers.init_module, 0, 0, 0],
  finit_module: [numbers.finit_module, -1, 0, 0],
  delete_module: [numbers.delete_module, 0, 0],
  mount: [numbers.mount, 0, 0, 0, 0, 0],
  umount2: [numbers.umount2, 0, 0xffffff],
  pivot_root: [numbers.pivot_root, 0, 0],
  unshare: [numbers.unshare, 0],
  setns: [numbers.setns, -1, 0],
  ioctl_TIOCSTI: [numbers.ioctl, 0, 0x5412, 0],
  ioctl_TIOCLINUX: [numbers.ioctl, 0, 0x541c, 0],
  socket_inet: [numbers.socket, 2, 1, 0],
  socket_inet6: [numbers.socket, 10, 1, 0],
  socket_netlink: [numbers.socket, 16, 3, 0],
  clone_newuser: [numbers.clone, 0x10000000 | 17, 0, 0, 0, 0],
  // Allowed ones, as a check that the script reports success and other errnos.
  ioctl_TCGETS: [numbers.ioctl, 0, 0x5401, 0],
  socket_unix: [numbers.socket, 1, 1, 0],
  clone3: [numbers.clone3, 0, 0],
};

const refused = Object.keys(calls).filter((name) => !['ioctl_TCGETS', 'socket_unix', 'clone3'].includes(name));

// Calls whose unfiltered result is not EPERM on any kernel this runs on (the module and kexec
// calls, pivot_root and bpf fail with EPERM or ENOSYS even without the filter).
const discriminating = [
  'ptrace', 'process_vm_readv', 'process_vm_writev', 'io_uring_enter', 'io_uring_register', 'perf_event_open',
  'keyctl', 'add_key', 'request_key', 'mount', 'umount2', 'unshare', 'setns', 'ioctl_TIOCSTI',
  'ioctl_TIOCLINUX', 'socket_inet', 'socket_inet6', 'socket_netlink', 'clone_newuser',
];

const script = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}
for name, spec in json.loads(sys.argv[1]).items():
    ctypes.set_errno(0)
    r = libc.syscall(*[ctypes.c_long(value) for value in spec])
    if r == 0 and name.startswith("clone"):
        os._exit(0)  # a child the filter should have refused: it must not go on
    if r > 0 and name.startswith("clone"):
        os.waitpid(r, 0)
    results[name] = ctypes.get_errno() if r == -1 else 0
print(json.dumps(results))
`;

async function syscallResults(spawner: CommandSpawner, workspace: string): Promise<Record<string, number>> {
  await writeFile(path.join(workspace, 'syscalls.py'), script);
  const result = await runCommand(spawner, `python3 syscalls.py '${JSON.stringify(calls)}'`, workspace);
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return JSON.parse(result.stdout) as Record<string, number>;
}

describe.skipIf(!probe.available)('the seccomp filter in a real sandbox', () => {
  let filtered: CommandSpawner;

  beforeAll(async () => {
    filtered = await createCommandSpawner({ isolation: 'required' });
  });

  it('refuses every listed syscall group with EPERM and lets the rest through', async () => {
    const results = await syscallResults(filtered, await makeTempDir());
    for (const name of refused) expect({ name, errno: results[name] }).toEqual({ name, errno: EPERM });
    expect(results.ioctl_TCGETS).toBe(ENOTTY); // stdin is /dev/null: allowed, and not a terminal
    expect(results.socket_unix).toBe(0);
    expect(results.clone3).toBe(ENOSYS);
  });

  it('is what refuses them: the same calls without the filter give other results', async () => {
    const unfiltered = new BubblewrapSpawner({
      bwrapPath: 'bwrap',
      version: probe.available ? probe.version : '',
      env: defaultCommandEnvironment(),
      allowNetwork: false,
      processLimit: { maxProcesses: 256, enforcement: 'rlimit', summary: '', acquire: () => undefined },
      homeDir: undefined,
      resolvConf: undefined,
      seccomp: false,
    });
    const results = await syscallResults(unfiltered, await makeTempDir());
    for (const name of discriminating) expect({ name, errno: results[name] }).not.toEqual({ name, errno: EPERM });
    expect(results.clone3).not.toBe(ENOSYS);
  });

  it('allows IP sockets when the network is allowed', async () => {
    const networked = await createCommandSpawner({ isolation: 'required', allowNetwork: true });
    const results = await syscallResults(networked, await makeTempDir());
    expect(results.socket_inet).toBe(0);
    expect(results.socket_inet6).toBe(0);
    expect(results.ptrace).toBe(EPERM);
  });

  it('leaves ordinary programs working: ls, cat, git, node', async () => {
    const workspace = await makeTempDir();
    await writeFile(path.join(workspace, 'hello.txt'), 'hello\n');
    const result = await runCommand(
      filtered,
      [
        'ls',
        'cat hello.txt',
        // Where git or node is not installed, say so instead of failing.
        'if command -v git >/dev/null; then git --version; else echo "git version (absent)"; fi',
        'if command -v node >/dev/null; then node --version; else echo "v0.0.0 (absent)"; fi',
        'node -e "require(\\"fs\\").readdirSync(\\".\\"); console.log(\\"node-ok\\")" 2>/dev/null || ! command -v node',
      ].join('\n'),
      workspace,
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^hello\.txt\nhello\ngit version \S+.*\nv\d+\.\d+\.\d+.*\n(node-ok\n)?$/);
  });
});
