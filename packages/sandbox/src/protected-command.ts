import { analyseCommand } from './shell-walk.js';

const keyValue = /^(?:--?[\w-]+|[A-Za-z_][\w.-]*)=(.*)$/s;

/**
 * Says whether `command` (shell text) names one of the workspace's protected paths — `.claw/`
 * (grants, sessions, settings), `.git/hooks/` or `.git/config` — in an argument, an option value
 * or a redirection. The bash tool applies it when commands are **not** isolated: then nothing else
 * keeps a command from granting itself permissions or planting a git hook. It is a text heuristic
 * with the usual limits (variables, `$(...)`, interpreters, `cd .git && …` get past it); under OS
 * isolation those paths are read-only and this fence is not needed.
 *
 * @returns A short reason when the command names a protected path; otherwise `undefined`.
 */
export function checkProtectedPaths(command: string): string | undefined {
  for (const invocation of analyseCommand(command).invocations) {
    const values = invocation.words.map((word) => word.value);
    for (const redirect of invocation.redirects) {
      if (redirect.target !== undefined) values.push(redirect.target.value);
    }
    for (const value of values) {
      const reason = protectedReason(keyValue.exec(value)?.[1] ?? value);
      if (reason !== undefined) return reason;
    }
  }
  return undefined;
}

function protectedReason(value: string): string | undefined {
  const parts: string[] = [];
  for (const segment of value.replace(/^\$(PWD|\{PWD\})(?=\/|$)/, '.').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') parts.pop();
    else parts.push(segment.toLowerCase());
  }
  const [first, second, third] = parts;
  if (first === '.claw') return `${JSON.stringify(value)} is inside .claw/, which holds claw's grants and sessions`;
  if (first === '.git' && second === 'hooks') return `${JSON.stringify(value)} is a git hook, a program git runs`;
  if (first === '.git' && second === 'config' && third === undefined) {
    return `${JSON.stringify(value)} is git's config, which can make git run programs`;
  }
  return undefined;
}
