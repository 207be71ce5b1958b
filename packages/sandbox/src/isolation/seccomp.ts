import { BpfAssembler } from './bpf.js';

/** The architectures the filter knows syscall numbers for. */
export type SeccompArch = 'x86_64' | 'aarch64';

/** `AUDIT_ARCH_*` values the kernel puts in `seccomp_data.arch` (linux/audit.h). */
export const auditArch: Readonly<Record<SeccompArch, number>> = {
  x86_64: 0xc000_003e,
  aarch64: 0xc000_00b7,
};

/** Seccomp actions (linux/seccomp.h). */
export const seccompAction = {
  killProcess: 0x8000_0000,
  errno: 0x0005_0000,
  allow: 0x7fff_0000,
} as const;

export const errnoValues = { EPERM: 1, ENOSYS: 38 } as const;

/** Offsets in `struct seccomp_data`: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. */
export const seccompDataOffset = {
  nr: 0,
  arch: 4,
  /** The low 32 bits of argument `index` (little-endian). */
  argumentLow: (index: number): number => 16 + 8 * index,
} as const;

/** Syscalls refused with EPERM whatever their arguments. */
export const refusedSyscalls = [
  // Reading or writing other processes.
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'pidfd_getfd',
  // Large kernel attack surfaces that commands have no need for.
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  // The kernel keyring is not namespaced.
  'keyctl',
  'add_key',
  'request_key',
  // Kernel code.
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  // Changing the mounts or namespaces bubblewrap set up.
  'mount',
  'umount2',
  'pivot_root',
  'unshare',
  'setns',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
] as const;

export type RefusedSyscall = (typeof refusedSyscalls)[number];

/** Syscalls the filter looks at the arguments of. */
export type InspectedSyscall = 'ioctl' | 'socket' | 'clone' | 'clone3';

/** Syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h). */
export const syscallNumbers: Readonly<
  Record<SeccompArch, Readonly<Record<RefusedSyscall | InspectedSyscall, number>>>
> = {
  x86_64: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    pidfd_getfd: 438,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    unshare: 272,
    setns: 308,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    ioctl: 16,
    socket: 41,
    clone: 56,
    clone3: 435,
  },
  aarch64: {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    pidfd_getfd: 438,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    unshare: 97,
    setns: 268,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    ioctl: 29,
    socket: 198,
    clone: 220,
    clone3: 435,
  },
};

/** ioctl requests that push input into a terminal or drive the console (asm-generic/ioctls.h). */
export const refusedIoctls = { TIOCSTI: 0x5412, TIOCLINUX: 0x541c } as const;

export const AF_UNIX = 1;

/** CLONE_NEW* flags (linux/sched.h): clone may not create namespaces either. */
export const cloneNamespaceFlags =
  0x0000_0080 // CLONE_NEWTIME
  | 0x0002_0000 // CLONE_NEWNS
  | 0x0200_0000 // CLONE_NEWCGROUP
  | 0x0400_0000 // CLONE_NEWUTS
  | 0x0800_0000 // CLONE_NEWIPC
  | 0x1000_0000 // CLONE_NEWUSER
  | 0x2000_0000 // CLONE_NEWPID
  | 0x4000_0000; // CLONE_NEWNET

/** On x86_64, syscall numbers with this bit set are the x32 ABI, which shares the arch value. */
export const x32SyscallBit = 0x4000_0000;

/** The `SeccompArch` of a Node `process.arch`, or `undefined` when the filter has no table. */
export function seccompArchOf(nodeArch: string): SeccompArch | undefined {
  if (nodeArch === 'x64') return 'x86_64';
  if (nodeArch === 'arm64') return 'aarch64';
  return undefined;
}

/**
 * Builds the seccomp program (classic BPF, as bubblewrap's `--seccomp` reads it) for commands in
 * the sandbox. It checks the architecture first and kills the process on any other than x86_64 and
 * aarch64 (so 32-bit compat syscalls cannot slip past the numbers), then refuses with EPERM:
 * {@link refusedSyscalls}; `ioctl` with TIOCSTI or TIOCLINUX; `clone` with any CLONE_NEW* flag;
 * on x86_64 every x32 syscall; and, unless `allowNetwork`, `socket` with a domain other than
 * AF_UNIX. `clone3` fails with ENOSYS, since its flags sit in memory a filter cannot read; the C
 * library then falls back to `clone`. Everything else is allowed.
 */
export function buildSeccompFilter(options: { allowNetwork: boolean }): Buffer {
  const program = new BpfAssembler();
  program
    .load(seccompDataOffset.arch)
    .jumpIf('equal', auditArch.x86_64, 'x86_64')
    .jumpIf('equal', auditArch.aarch64, 'aarch64')
    .return(seccompAction.killProcess);
  for (const arch of ['x86_64', 'aarch64'] as const) {
    const numbers = syscallNumbers[arch];
    program.label(arch).load(seccompDataOffset.nr);
    if (arch === 'x86_64') program.jumpIf('anyBitSet', x32SyscallBit, 'refuse');
    for (const name of refusedSyscalls) program.jumpIf('equal', numbers[name], 'refuse');
    program
      .jumpIf('equal', numbers.ioctl, 'ioctl')
      .jumpIf('equal', numbers.clone, 'clone')
      .jumpIf('equal', numbers.clone3, 'not-implemented');
    if (!options.allowNetwork) program.jumpIf('equal', numbers.socket, 'socket');
    program.return(seccompAction.allow);
  }
  // Argument checks; the argument layout is the same on both architectures.
  program
    .label('ioctl')
    .load(seccompDataOffset.argumentLow(1)) // the kernel reads the request as 32 bits
    .jumpIf('equal', refusedIoctls.TIOCSTI, 'refuse')
    .jumpIf('equal', refusedIoctls.TIOCLINUX, 'refuse')
    .return(seccompAction.allow)
    .label('clone')
    .load(seccompDataOffset.argumentLow(0))
    .jumpIf('anyBitSet', cloneNamespaceFlags, 'refuse')
    .return(seccompAction.allow);
  if (!options.allowNetwork) {
    program
      .label('socket')
      .load(seccompDataOffset.argumentLow(0)) // the domain, an int
      .jumpIf('equal', AF_UNIX, 'allow', 'refuse');
  }
  program
    .label('not-implemented')
    .return(seccompAction.errno | errnoValues.ENOSYS)
    .label('refuse')
    .return(seccompAction.errno | errnoValues.EPERM)
    .label('allow')
    .return(seccompAction.allow);
  return program.assemble();
}
