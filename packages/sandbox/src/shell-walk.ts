import { parseScript, type Redirect, type Word } from './shell-parse.js';

// Looks through the shell text for every simple command that would run, including those inside
// `$(...)`, backticks, `sh -c '...'`, `eval ...`, `watch ...`, `find -exec ...` and behind
// wrappers like `sudo` or `env`, so that the fences judge each one on its own.

/** One simple command as the fences see it. */
export interface Invocation {
  /** All words, prefixes (assignments, `sudo`, `env`...) included. */
  readonly words: readonly Word[];
  /** Where the command name is in `words` after the prefixes; `words.length` when there is none. */
  readonly commandIndex: number;
  readonly redirects: readonly Redirect[];
}

/** Everything found in one command text. */
export interface Analysis {
  /** The text itself and every nested script text, for checks on raw text (fork bombs). */
  readonly scripts: readonly string[];
  readonly invocations: readonly Invocation[];
}

// Deeper nesting than this is not read; the cap also bounds the work on hostile input.
const maxDepth = 8;
const maxScripts = 256;

/**
 * How a script's `$'...'` is read: `ansi-c` as bash's ANSI-C quoting; `either` both that way and
 * literally (up to the next `'`), the fences judging both readings, for shells that may not know
 * it (`sh` may be dash, which reads a `$` and a plain single-quoted string).
 */
type Dialect = 'ansi-c' | 'either';

// The shells whose `-c` scripts are read, and how each reads `$'...'`.
const shells = new Map<string, Dialect>([
  ['bash', 'ansi-c'], ['zsh', 'ansi-c'], ['ksh', 'ansi-c'], ['mksh', 'ansi-c'],
  ['sh', 'either'], ['dash', 'either'], ['ash', 'either'], ['fish', 'either'],
]);
const keywords = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'do', 'while', 'until']);
const assignment = /^[A-Za-z_]\w*\+?=/;

interface WrapperSpec {
  /** Options that take the next word as their value. */
  readonly withValue?: readonly string[];
  /** Non-option words to skip after the options (the duration of `timeout`). */
  readonly positional?: number;
  /** `NAME=value` words are part of the wrapper (`env`). */
  readonly assignments?: boolean;
}

const wrappers = new Map<string, WrapperSpec>([
  ['sudo', { withValue: ['-u', '-g', '-C', '-p', '-r', '-t', '-U', '-D', '-R', '-T', '-h'] }],
  ['doas', { withValue: ['-u', '-C'] }],
  ['env', { withValue: ['-u', '-C', '-S'], assignments: true }],
  ['nice', { withValue: ['-n'] }],
  ['ionice', { withValue: ['-c', '-n', '-p'] }],
  ['timeout', { withValue: ['-s', '-k'], positional: 1 }],
  ['nohup', {}],
  ['time', {}],
  ['exec', { withValue: ['-a'] }],
  ['command', {}],
  ['builtin', {}],
  ['stdbuf', {}],
  ['busybox', {}],
  ['xargs', { withValue: ['-I', '-n', '-P', '-L', '-s', '-d', '-E', '-a'] }],
]);

/** Reads `command` (a bash script, as the bash tool runs it) and every script nested in it. */
export function analyseCommand(command: string): Analysis {
  const walker = new Walker();
  walker.visitScript(command, 0, 'ansi-c');
  return { scripts: walker.scripts, invocations: walker.invocations };
}

/** The command name of a word: the last path segment, lower-cased (`/SBIN/Reboot` → `reboot`). */
export function commandName(word: Word | undefined): string {
  const value = word?.value.toLowerCase() ?? '';
  return value.slice(value.lastIndexOf('/') + 1);
}

class Walker {
  readonly scripts: string[] = [];
  readonly invocations: Invocation[] = [];

  visitScript(script: string, depth: number, dialect: Dialect): void {
    if (depth > maxDepth || this.scripts.length >= maxScripts) return;
    this.scripts.push(script);
    const first = parseScript(script);
    const readings = [first];
    // Read literally too where the shell may not know `$'...'`, and where one is left open (bash
    // refuses that text; what it was meant to be is unclear, so both splits are judged).
    if ((dialect === 'either' || first.unterminatedAnsiC) && /\$['"]/.test(script)) {
      readings.push(parseScript(script, { ansiC: false }));
    }
    const substitutions = new Set<string>();
    for (const reading of readings) {
      for (const command of reading.commands) {
        this.visitCommand(command.words, command.redirects, depth, dialect);
      }
      for (const inner of reading.substitutions) substitutions.add(inner);
    }
    for (const inner of substitutions) this.visitScript(inner, depth + 1, dialect);
  }

  private visitCommand(
    words: readonly Word[],
    redirects: readonly Redirect[],
    depth: number,
    dialect: Dialect,
  ): void {
    if (depth > maxDepth) return;
    const commandIndex = commandStart(words);
    this.invocations.push({ words, commandIndex, redirects });
    const name = commandName(words[commandIndex]);
    const rest = words.slice(commandIndex + 1);
    const shell = shells.get(name);
    if (shell !== undefined) {
      const script = shellScript(rest);
      if (script !== undefined) this.visitScript(script, depth + 1, shell);
      for (const redirect of redirects) {
        if (redirect.operator === '<<<' && redirect.target !== undefined) {
          this.visitScript(redirect.target.value, depth + 1, shell);
        }
      }
    } else if (name === 'eval') {
      this.visitScript(joined(rest), depth + 1, dialect);
    } else if (name === 'watch') {
      // watch runs its command with `sh -c`.
      const command = joined(rest.slice(skipOptions(rest, 0, { withValue: ['-n'] })));
      this.visitScript(command, depth + 1, 'either');
    } else if (name === 'find') {
      for (const executed of findExecs(rest)) this.visitCommand(executed, [], depth + 1, dialect);
    }
  }
}

function joined(words: readonly Word[]): string {
  return words.map((word) => word.value).join(' ');
}

/** The index of the command name after assignments, keywords and wrappers with their options. */
function commandStart(words: readonly Word[]): number {
  let index = 0;
  while (index < words.length) {
    const value = words[index]?.value ?? '';
    if (assignment.test(value) || keywords.has(value.toLowerCase())) {
      index += 1;
      continue;
    }
    const wrapper = wrappers.get(commandName(words[index]));
    if (wrapper === undefined) break;
    index = skipOptions(words, index + 1, wrapper);
  }
  return index;
}

function skipOptions(words: readonly Word[], start: number, spec: WrapperSpec): number {
  let index = start;
  while (index < words.length) {
    const value = words[index]?.value ?? '';
    if (value === '--') {
      index += 1;
      break;
    }
    if (spec.assignments === true && assignment.test(value)) {
      index += 1;
    } else if (value.startsWith('-') && value.length > 1) {
      index += spec.withValue?.includes(value) === true ? 2 : 1;
    } else {
      break;
    }
  }
  return Math.min(words.length, index + (spec.positional ?? 0));
}

/** The script of `sh -c 'script'`: the first operand after options, when one of them has `c`. */
function shellScript(words: readonly Word[]): string | undefined {
  let sawCommandOption = false;
  for (let index = 0; index < words.length; index += 1) {
    const value = words[index]?.value ?? '';
    if (value === '--') continue;
    if (value.startsWith('-') || value.startsWith('+')) {
      if (/^-[A-Za-z]*c[A-Za-z]*$/.test(value)) sawCommandOption = true;
      if (value === '-o' || value === '+o') index += 1;
      continue;
    }
    return sawCommandOption ? value : undefined;
  }
  return undefined;
}

/** The commands `find` runs with `-exec`, `-execdir`, `-ok` and `-okdir`. */
function findExecs(words: readonly Word[]): Word[][] {
  const commands: Word[][] = [];
  let current: Word[] | undefined;
  for (const word of words) {
    if (current === undefined) {
      if (['-exec', '-execdir', '-ok', '-okdir'].includes(word.value)) current = [];
    } else if (word.value === ';' || word.value === '+') {
      commands.push(current);
      current = undefined;
    } else {
      current.push(word);
    }
  }
  if (current !== undefined) commands.push(current);
  return commands;
}
