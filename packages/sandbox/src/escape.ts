import { substitutionMark, type Word } from './shell-parse.js';
import { analyseCommand, commandName, type Invocation } from './shell-walk.js';

// Redirection targets and arguments that may be absolute: the process's own streams and the sink.
const allowedAbsolute = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);
// Absolute program names in these folders run a program; they do not reach into its folder.
const programFolders = new Set(['/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin']);
// Variables that hold a place outside the workspace.
const outsideVariables = new Set(['HOME', 'OLDPWD']);
const url = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const keyValue = /^(?:--?[\w-]+|[A-Za-z_][\w.-]*)=(.*)$/s;

/**
 * Says whether `command` (shell text) reaches outside the workspace it runs in, and how (SBX-3).
 * Each simple command is judged on its own, including those nested in `$(...)`, backticks,
 * `sh -c '...'` and `eval ...`. Arguments, `--option=value` and `name=value` values and
 * redirection targets are read as paths relative to the workspace root.
 *
 * Flagged: absolute paths (`cat /etc/passwd`; only `/dev/null`, `/dev/stdout` and `/dev/stderr`
 * are allowed, and programs named by absolute path in `/bin`, `/usr/bin` and the like), an
 * unquoted leading `~`, `$HOME`/`${HOME}` and `$OLDPWD`, `cd` (or `pushd`) with no argument,
 * `cd -`, and any path whose `..` segments, resolved lexically from the workspace root, leave it
 * (`cat ../x`, `ls a/../../b`; `cat docs/../a.go` passes). URLs (`http://host/x`) are not paths
 * here; the network is another layer's concern.
 *
 * This is a text heuristic and only a first fence: variables, `$(...)`, a `cd` into a folder
 * that is a symlink, quoting tricks and interpreters (`python -c ...`) all get past it, and it
 * may refuse a pattern such as `grep /api` that only looks like a path. OS-level isolation is
 * what actually contains a command.
 *
 * @returns A short reason, for the user, when the command escapes; otherwise `undefined`.
 */
export function checkWorkspaceEscape(command: string): string | undefined {
  if (typeof command !== 'string') return undefined;
  for (const invocation of analyseCommand(command).invocations) {
    const reason = escapingInvocation(invocation);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * True when `checkWorkspaceEscape` has a reason to refuse `command` (SBX-3). The same text
 * heuristic, with the same limits: a first fence, not isolation.
 */
export function commandEscapesWorkspace(command: string): boolean {
  return checkWorkspaceEscape(command) !== undefined;
}

function escapingInvocation(invocation: Invocation): string | undefined {
  const { words, commandIndex, redirects } = invocation;
  const name = commandName(words[commandIndex]);
  if (name === 'cd' || name === 'pushd') {
    const targets = words
      .slice(commandIndex + 1)
      .filter((word) => !/^(-[LPe@]+|--)$/.test(word.value));
    if (targets.length === 0) return `${name} with no argument goes to the home folder`;
    if (targets[0]?.value === '-') {
      return `${name} - goes back to the previous folder, which may be outside`;
    }
  }
  for (const [index, word] of words.entries()) {
    // The command name and the wrappers before it (`/usr/bin/env node`) may name a program.
    const reason = index <= commandIndex && isProgramPath(word.value)
      ? undefined
      : escapingWord(word);
    if (reason !== undefined) return reason;
  }
  for (const { operator, target } of redirects) {
    if (target === undefined || operator === '<<' || operator === '<<-' || operator === '<<<') {
      continue;
    }
    if (operator.endsWith('&') && /^(\d+|-)$/.test(target.value)) continue;
    const reason = escapingWord(target);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function isProgramPath(value: string): boolean {
  const slash = value.lastIndexOf('/');
  return slash > 0 && programFolders.has(value.slice(0, slash));
}

function escapingWord(word: Word): string | undefined {
  const variable = word.variables.find((name) => outsideVariables.has(name));
  if (variable !== undefined) return `$${variable} refers to a place outside the workspace`;
  const pair = keyValue.exec(word.value);
  if (pair !== null) return escapingPath(pair[1] ?? '', (pair[1] ?? '').startsWith('~'));
  // A path glued to a one-letter option (`-I/usr/include`, `-o../out`); `cut -d/` is no path.
  const glued = /^-[A-Za-z]((?:\/[^/]|~|\.\.).*)$/s.exec(word.value)?.[1];
  if (glued !== undefined) return escapingPath(glued, glued.startsWith('~'));
  if (word.value.startsWith('-')) return undefined;
  return escapingPath(word.value, word.tilde);
}

function escapingPath(value: string, tilde: boolean): string | undefined {
  if (value === '') return undefined;
  if (/^file:\/\//i.test(value)) return `${JSON.stringify(value)} is a file URL, an absolute path`;
  if (url.test(value)) return undefined;
  const path = value.replace(/^\$(PWD|\{PWD\})(?=\/|$)/, '.');
  const shown = JSON.stringify(value.replaceAll(substitutionMark, '$(...)'));
  if (tilde && path.startsWith('~')) return `${shown} refers to a home folder`;
  if (path.startsWith('/')) {
    return allowedAbsolute.has(path) ? undefined : `${shown} is an absolute path`;
  }
  let depth = 0;
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    depth += segment === '..' ? -1 : 1;
    if (depth < 0) return `${shown} leads outside the workspace`;
  }
  return undefined;
}
