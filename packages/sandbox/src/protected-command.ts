import { posix } from 'node:path';
import { protectedPathReason } from './opened-file.js';
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

// Words are judged as paths from the workspace root, by the same rule the file tools apply.
const root = '/workspace';

function protectedReason(value: string): string | undefined {
  const relative = value.replace(/^\$(PWD|\{PWD\})(?=\/|$)/, '.');
  const reason = protectedPathReason(root, posix.join(root, relative));
  return reason === undefined ? undefined : `${JSON.stringify(value)} is protected: ${reason}`;
}
