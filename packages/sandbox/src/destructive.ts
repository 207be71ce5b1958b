import { posix } from 'node:path';
import { blankQuotedText, substitutionMark, type Word } from './shell-parse.js';
import { analyseCommand, commandName, type Invocation } from './shell-walk.js';

// Devices that are fine to write to: sinks, sources and the process's own streams.
const harmlessDevice =
  /^\/dev\/(null|zero|full|random|urandom|tty|stdin|stdout|stderr|ptmx|fd\/\d+|pts\/\d+|shm(\/.*)?)$/;

const systemFolders = new Set([
  'bin', 'boot', 'dev', 'etc', 'home', 'lib', 'lib32', 'lib64', 'media', 'mnt', 'opt', 'proc',
  'root', 'run', 'sbin', 'snap', 'srv', 'sys', 'usr', 'var', 'users', 'system', 'library',
  'applications', 'private', 'volumes',
]);

const powerCommands = new Set(['shutdown', 'reboot', 'halt', 'poweroff']);
const systemctlPower = new Set(['poweroff', 'reboot', 'halt', 'kexec', 'rescue', 'emergency']);
const partitioners = new Set(['fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk', 'gdisk']);

/**
 * Says whether `command` (shell text) would destroy the machine or its data, and why (SBX-2).
 * After folding whitespace and case, each simple command is judged on its own, including those
 * nested in `$(...)`, backticks, `sh -c '...'`, `eval ...`, `find -exec` and behind `sudo`/`env`.
 *
 * Flagged: recursive `rm` of `/`, `/*`, a top-level system folder, `~`, `$HOME` or `..`, and
 * `rm --no-preserve-root`; `mkfs*`, `mke2fs`, `mkswap`, `wipefs`, `blkdiscard`; `dd of=/dev/...`;
 * `shred`, `cp`, `tee`, partition editors and `>` redirections onto a device; `shutdown`,
 * `reboot`, `halt`, `poweroff`, `init 0`/`6`, `systemctl reboot` and the like; fork bombs;
 * recursive `chmod`/`chown`/`chgrp` of those same targets; `find` of them with `-delete`;
 * `kill -9 -1`; `mv` of them. Mentions are not flagged: `grep shutdown f`, `echo "rm -rf /"`,
 * `rm -rf ./build` all pass.
 *
 * This is a text heuristic and only a first fence: variables, `$(...)` that compute a target,
 * quoting tricks, scripts written to a file and run, and interpreters (`python -c ...`) all get
 * past it. OS-level isolation is what actually contains a command.
 *
 * @returns A short reason, for the user, when the command is destructive; otherwise `undefined`.
 */
export function checkDestructiveCommand(command: string): string | undefined {
  if (typeof command !== 'string') return undefined;
  const analysis = analyseCommand(command);
  for (const script of analysis.scripts) {
    if (isForkBomb(script)) return 'a fork bomb: it starts processes until the machine stalls';
  }
  for (const invocation of analysis.invocations) {
    const reason = destructiveInvocation(invocation);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * True when `checkDestructiveCommand` has a reason to refuse `command` (SBX-2). The same text
 * heuristic, with the same limits: a first fence, not isolation.
 */
export function isDestructiveCommand(command: string): boolean {
  return checkDestructiveCommand(command) !== undefined;
}

function isForkBomb(script: string): boolean {
  // Quoted text is only mentioned, never run, so it does not count. `$'...'` is read both as
  // bash's ANSI-C quoting and literally (as a shell without it does); a bomb in either counts.
  if (hasForkBomb(blankQuotedText(script))) return true;
  return script.includes("$'") && hasForkBomb(blankQuotedText(script, { ansiC: false }));
}

function hasForkBomb(text: string): boolean {
  const bare = text.replace(/\s+/g, '').toLowerCase();
  // `name(){ name|name& };name`, found by looking only where a function body starts, so the check
  // stays linear however long the text (a backtracking pattern over all of it took seconds).
  for (let start = bare.indexOf('(){'); start !== -1; start = bare.indexOf('(){', start + 3)) {
    const name = nameBefore(bare, start);
    if (name === undefined || !bare.startsWith(`${name}|${name}&`, start + 3)) continue;
    let position = start + 3 + 2 * name.length + 2;
    if (bare[position] === ';') position += 1;
    if (bare[position] !== '}') continue;
    position += 1;
    if (bare[position] === ';') position += 1;
    if (bare.startsWith(name, position)) return true;
  }
  return false;
}

/** The function name that ends at `end` (letters, digits, `_:.-`, not starting with a digit). */
function nameBefore(text: string, end: number): string | undefined {
  let start = end;
  // Each scan stays within one run of name characters, so all scans together are linear.
  while (start > 0 && /[\w:.-]/.test(text[start - 1] as string)) start -= 1;
  while (start < end && !/[a-z_:]/.test(text[start] as string)) start += 1;
  return start < end ? text.slice(start, end) : undefined;
}

function lower(word: Word): string {
  return word.value.toLowerCase();
}

function operands(args: readonly string[]): string[] {
  const end = args.indexOf('--');
  const before = (end < 0 ? args : args.slice(0, end)).filter((arg) => !arg.startsWith('-'));
  return end < 0 ? before : [...before, ...args.slice(end + 1)];
}

function hasShortOrLong(args: readonly string[], short: string, long: string): boolean {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some(
    (arg) => arg === long || (/^-[a-z]+$/.test(arg) && arg.includes(short)),
  );
}

/** Describes `target` when it is a place whose wholesale loss ruins the machine or the user. */
export function dangerousTarget(target: string): string | undefined {
  if (target.includes(substitutionMark)) return undefined;
  let path = posix.normalize(target);
  for (;;) {
    if (path.endsWith('/*') || path.endsWith('/.')) path = path.slice(0, -2) || '/';
    else if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    else break;
  }
  if (path === '/' || path === '') return 'the file-system root (/)';
  if (/^~[\w.-]*$/.test(path)) return `a home folder (${path})`;
  if (path === '$home' || path === '${home}') return `the home folder (${path.toUpperCase()})`;
  if (/^\.\.(\/\.\.)*$/.test(path)) return `a folder above the workspace (${path})`;
  if (/^\/[^/]+$/.test(path) && systemFolders.has(path.slice(1))) {
    return `the system folder ${path}`;
  }
  return undefined;
}

function deviceIn(args: readonly string[]): string | undefined {
  return args.find((arg) => arg.startsWith('/dev/') && !harmlessDevice.test(arg));
}

function destructiveInvocation(invocation: Invocation): string | undefined {
  const { words, commandIndex, redirects } = invocation;
  for (const redirect of redirects) {
    const target = redirect.target === undefined ? '' : lower(redirect.target);
    const writes = redirect.operator.includes('>') && !redirect.operator.endsWith('&');
    if (writes && target.startsWith('/dev/') && !harmlessDevice.test(target)) {
      return `writes straight onto the device ${target}`;
    }
  }
  const command = words[commandIndex];
  if (command === undefined) return undefined;
  const name = commandName(command);
  const args = words.slice(commandIndex + 1).map(lower);
  return judge(name, args);
}

function judge(name: string, args: readonly string[]): string | undefined {
  if (powerCommands.has(name)) return `${name} stops or restarts the machine`;
  if (name.startsWith('mkfs') || name === 'mke2fs' || name === 'mkswap') {
    return `${name} formats a file system, erasing what is on it`;
  }
  if (name === 'wipefs' || name === 'blkdiscard') return `${name} erases a disk`;
  switch (name) {
    case 'rm':
      return judgeRemove(args);
    case 'chmod':
    case 'chown':
    case 'chgrp':
      return judgeRecursiveChange(name, args);
    case 'dd': {
      const output = args.find((arg) => arg.startsWith('of=/dev/'))?.slice(3);
      return output !== undefined && !harmlessDevice.test(output)
        ? `dd writes straight onto the device ${output}`
        : undefined;
    }
    case 'shred':
    case 'tee': {
      const device = deviceIn(operands(args));
      return device === undefined ? undefined : `${name} overwrites the device ${device}`;
    }
    case 'cp': {
      const device = deviceIn(operands(args).slice(-1));
      return device === undefined ? undefined : `cp overwrites the device ${device}`;
    }
    case 'mv': {
      const what = operands(args).slice(0, -1).map(dangerousTarget).find(Boolean);
      return what === undefined ? undefined : `mv moves away ${what}`;
    }
    case 'init':
    case 'telinit':
      return args[0] === '0' || args[0] === '6'
        ? `${name} ${args[0]} stops or restarts the machine`
        : undefined;
    case 'systemctl': {
      const verb = args.find((arg) => !arg.startsWith('-'));
      return verb !== undefined && systemctlPower.has(verb)
        ? `systemctl ${verb} stops or restarts the machine`
        : undefined;
    }
    case 'find': {
      const what = args.filter((arg) => !arg.startsWith('-')).map(dangerousTarget).find(Boolean);
      return what !== undefined && args.includes('-delete') ? `find -delete of ${what}` : undefined;
    }
    case 'kill': {
      // `kill -9 -1`: the pid -1 means every process; a leading `-1` alone is a signal.
      let start = 0;
      if (args[0] === '-s' || args[0] === '-n') start = 2;
      else if (args[0]?.startsWith('-') === true && args[0] !== '--' && args.length > 1) start = 1;
      if (args[start] === '--') start += 1;
      return args.slice(start).includes('-1')
        ? 'kill -1 signals every process the user may signal'
        : undefined;
    }
    default:
      if (partitioners.has(name)) {
        const device = deviceIn(operands(args));
        const listing = args.includes('-l') || args.includes('--list') || args.includes('print');
        return device !== undefined && !listing
          ? `${name} rewrites the partitions of ${device}`
          : undefined;
      }
      return undefined;
  }
}

function judgeRemove(args: readonly string[]): string | undefined {
  if (args.includes('--no-preserve-root')) {
    return 'rm --no-preserve-root may delete the whole file system';
  }
  if (!hasShortOrLong(args, 'r', '--recursive')) return undefined;
  const what = operands(args).map(dangerousTarget).find(Boolean);
  return what === undefined ? undefined : `recursive rm of ${what}`;
}

function judgeRecursiveChange(name: string, args: readonly string[]): string | undefined {
  if (!hasShortOrLong(args, 'r', '--recursive')) return undefined;
  const what = operands(args).map(dangerousTarget).find(Boolean);
  return what === undefined ? undefined : `recursive ${name} of ${what}`;
}
