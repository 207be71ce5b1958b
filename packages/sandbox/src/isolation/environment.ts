import { IsolationOptionsError } from './errors.js';

/** Used when the caller gives no PATH: the usual system folders. */
export const defaultPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The environment commands get when the caller passes none: only PATH, LANG, LC_ALL and TERM, with
 * fixed values. The parent's environment is never copied, so API keys and tokens stay out.
 */
export function defaultCommandEnvironment(): Record<string, string> {
  return { PATH: defaultPath, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TERM: 'dumb' };
}

/**
 * Checks that every entry can be passed on (bubblewrap's `--setenv` and `execve` need a name
 * without `=` or NUL and a value without NUL) and returns a copy. Throws `IsolationOptionsError`.
 */
export function checkEnvironment(env: Record<string, string>): Record<string, string> {
  const copy: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name === '' || name.includes('=') || name.includes('\0')) {
      throw new IsolationOptionsError(
        `the environment variable name ${JSON.stringify(name)} is not valid: use a non-empty ` +
        'name without "=" or NUL',
      );
    }
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new IsolationOptionsError(
        `the value of the environment variable ${name} must be a string without NUL bytes`,
      );
    }
    copy[name] = value;
  }
  return copy;
}

/** The environment bubblewrap itself runs with: PATH only, to find it and nothing secret. */
export function launcherEnvironment(env: Record<string, string>): Record<string, string> {
  return { PATH: env.PATH ?? defaultPath };
}
