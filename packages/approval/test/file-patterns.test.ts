import { describe, expect, it } from 'vitest';
import { FilePatterns } from '../src/file-patterns.js';

describe('FilePatterns (allowFiles)', () => {
  it.each([
    ['.env.local', '.env.local', true],
    ['./.env.local', '.env.local', true],
    ['.env.local', 'sub/.env.local', false],
    ['.env.*', '.env.local', true],
    ['.env.*', '.env', false],
    ['*', '.env', true],
    ['*', 'a/.env', false],
    ['config/*.env', 'config/prod.env', true],
    ['**/.env', '.env', true],
    ['**/.env', 'a/b/c/.env', true],
    ['a/**/.env', 'a/.env', true],
    ['a/**/.env', 'a/x/y/.env', true],
    ['a/**/.env', 'b/x/.env', false],
    ['**', 'any/path/at/all', true],
    ['.env.(local)', '.env.(local)', true],
    ['.env.[ab]', '.env.a', false],
    ['.env.l?cal', '.env.local', false],
    ['.Env', '.env', false],
  ])('%s covers %s: %s', (pattern, path, expected) => {
    expect(new FilePatterns([pattern]).matches(path)).toBe(expected);
  });

  it('covers a path when any pattern does; none cover nothing', () => {
    const patterns = new FilePatterns(['.env.local', 'config/.env.*']);
    expect(patterns.matches('config/.env.test')).toBe(true);
    expect(patterns.matches('.env')).toBe(false);
    expect(new FilePatterns([]).matches('.env')).toBe(false);
  });

  it('says what is wrong with a pattern it cannot use, and how to write one', () => {
    expect(() => new FilePatterns(['../x'])).toThrow(/cannot be used: it has an empty, "\." or "\.\." segment\. Give a path from the workspace root/);
    expect(() => new FilePatterns(['/etc/.env'])).toThrow(/it is absolute/);
  });
});
