import { describe, expect, it } from 'vitest';
import { buildSeccompFilter, seccompArchOf } from '../../src/isolation/seccomp.js';
import { runSeccompProgram } from './helpers.js';

// Written out here again from the kernel headers (asm/unistd_64.h, asm-generic/unistd.h), so a
// wrong number in the filter's table shows up as a failure instead of being checked against itself.
const syscalls = {
  x86_64: {
    ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, pidfd_getfd: 438,
    io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, bpf: 321,
    perf_event_open: 298, userfaultfd: 323, keyctl: 250, add_key: 248, request_key: 249,
    kexec_load: 246, kexec_file_load: 320, init_module: 175, finit_module: 313, delete_module: 176,
    mount: 165, umount2: 166, pivot_root: 155, unshare: 272, setns: 308, open_tree: 428,
    move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  },
  aarch64: {
    ptrace: 117, process_vm_readv: 270, process_vm_writev: 271, pidfd_getfd: 438,
    io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427, bpf: 280,
    perf_event_open: 241, userfaultfd: 282, keyctl: 219, add_key: 217, request_key: 218,
    kexec_load: 104, kexec_file_load: 294, init_module: 105, finit_module: 273, delete_module: 106,
    mount: 40, umount2: 39, pivot_root: 41, unshare: 97, setns: 268, open_tree: 428,
    move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  },
} as const;

const inspected = {
  x86_64: { ioctl: 16, socket: 41, clone: 56, clone3: 435, read: 0, write: 1, openat: 257, execve: 59 },
  aarch64: { ioctl: 29, socket: 198, clone: 220, clone3: 435, read: 63, write: 64, openat: 56, execve: 221 },
} as const;

const arches = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const;
const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ENOSYS = 0x00050026;
const KILL_PROCESS = 0x80000000;

describe.each(['x86_64', 'aarch64'] as const)('the seccomp filter on %s', (arch) => {
  const closed = buildSeccompFilter({ allowNetwork: false });
  const open = buildSeccompFilter({ allowNetwork: true });
  const run = (program: Buffer, nr: number, args: number[] = []): number =>
    runSeccompProgram(program, { nr, arch: arches[arch], args });
  const numbers = inspected[arch];

  it.each(Object.entries(syscalls[arch]))('refuses %s (%i) with EPERM', (_name, nr) => {
    expect(run(closed, nr)).toBe(EPERM);
    expect(run(open, nr)).toBe(EPERM);
  });

  it('allows ordinary syscalls', () => {
    for (const nr of [numbers.read, numbers.write, numbers.openat, numbers.execve]) {
      expect(run(closed, nr, [3, 0, 0])).toBe(ALLOW);
    }
  });

  it('refuses ioctl TIOCSTI and TIOCLINUX, judging the request by its low 32 bits, and allows others', () => {
    expect(run(closed, numbers.ioctl, [0, 0x5412])).toBe(EPERM);
    expect(run(closed, numbers.ioctl, [0, 0x541c])).toBe(EPERM);
    // The kernel reads the request as an unsigned int: high bits do not hide it.
    expect(run(closed, numbers.ioctl, [0, 0x1_0000_5412])).toBe(EPERM);
    expect(run(closed, numbers.ioctl, [0, 0x5401])).toBe(ALLOW); // TCGETS
    expect(run(closed, numbers.ioctl, [0x5412, 0x5401])).toBe(ALLOW); // fd is not the request
  });

  it('allows only AF_UNIX sockets when the network is off, and every socket when it is on', () => {
    expect(run(closed, numbers.socket, [1, 1, 0])).toBe(ALLOW); // AF_UNIX
    expect(run(closed, numbers.socket, [2, 1, 0])).toBe(EPERM); // AF_INET
    expect(run(closed, numbers.socket, [10, 2, 0])).toBe(EPERM); // AF_INET6
    expect(run(closed, numbers.socket, [16, 3, 0])).toBe(EPERM); // AF_NETLINK
    expect(run(closed, numbers.socket, [17, 3, 0])).toBe(EPERM); // AF_PACKET
    expect(run(open, numbers.socket, [2, 1, 0])).toBe(ALLOW);
    expect(run(open, numbers.socket, [10, 2, 0])).toBe(ALLOW);
  });

  it('refuses clone with a namespace flag, allows fork-like clones, and makes clone3 fall back', () => {
    const SIGCHLD = 17;
    const threadFlags = 0x3d0f00; // what glibc's pthread_create passes
    expect(run(closed, numbers.clone, [SIGCHLD])).toBe(ALLOW);
    expect(run(closed, numbers.clone, [threadFlags])).toBe(ALLOW);
    for (const flag of [0x80, 0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000]) {
      expect(run(closed, numbers.clone, [flag | SIGCHLD])).toBe(EPERM);
    }
    expect(run(closed, numbers.clone3, [0, 88])).toBe(ENOSYS);
  });

  it('is the arch that seccompArchOf names for the Node arch', () => {
    expect(seccompArchOf(arch === 'x86_64' ? 'x64' : 'arm64')).toBe(arch);
  });
});

describe('the seccomp filter on other architectures', () => {
  const program = buildSeccompFilter({ allowNetwork: true });

  it('kills the process for i386, 32-bit arm, big-endian aarch64 and anything unknown', () => {
    for (const arch of [0x40000003, 0x40000028, 0x800000b7, 0]) {
      expect(runSeccompProgram(program, { nr: 0, arch })).toBe(KILL_PROCESS);
    }
  });

  it('refuses x32 syscalls on x86_64, which share its arch value', () => {
    expect(runSeccompProgram(program, { nr: 0x40000000 | 0, arch: arches.x86_64 })).toBe(EPERM);
    expect(runSeccompProgram(program, { nr: 0x40000000 | 101, arch: arches.x86_64 })).toBe(EPERM);
  });

  it('has no table for other Node arches', () => {
    expect(seccompArchOf('ia32')).toBeUndefined();
    expect(seccompArchOf('ppc64')).toBeUndefined();
  });

  it('is a whole number of 8-byte instructions, well under the kernel limit', () => {
    expect(program.length % 8).toBe(0);
    expect(program.length / 8).toBeGreaterThan(60);
    expect(program.length / 8).toBeLessThan(4096);
  });
});
