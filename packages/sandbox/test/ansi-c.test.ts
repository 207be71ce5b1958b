import { describe, expect, it } from 'vitest';
import { decodeAnsiC } from '../src/ansi-c.js';
import {
  checkDestructiveCommand,
  checkProtectedPaths,
  checkWorkspaceEscape,
} from '../src/index.js';

// Bash's ANSI-C quoting, `$'...'`, interprets backslash escapes: `\'` is a quote that does not end
// the string, `\\` a backslash, `\x2f` a slash. The fences must split and decode such text as bash
// does, or a command hides behind a string that bash has already closed.

describe('decodeAnsiC: the body of $\'...\' as bash decodes it', () => {
  it.each([
    ['plain text', 'abc', 'abc'],
    ['a quote', "\\'", "'"],
    ['a backslash', '\\\\', '\\'],
    ['a double quote and a question mark', '\\"\\?', '"?'],
    ['the letter escapes', '\\a\\b\\e\\E\\f\\n\\r\\t\\v', '\x07\b\x1b\x1b\f\n\r\t\v'],
    ['hex', '\\x2fetc\\x2fpasswd', '/etc/passwd'],
    ['hex takes at most two digits', '\\x411', 'A1'],
    ['octal, one to three digits', '\\57\\0571\\7', '//1\x07'],
    ['octal wraps at a byte', '\\501', 'A'],
    ['\\u and \\U', '\\u002f\\U0000002F\\u00e9\\U0001F600', '//é😀'],
    ['bytes that form UTF-8', '\\xc3\\xa9', 'é'],
    ['control characters', '\\cA\\c?\\c\\\\', '\x01\x7f\x1c'],
    ['unknown escapes keep the backslash', '\\q\\x\\xg\\u\\U\\c', '\\q\\x\\xg\\u\\U\\c'],
    ['a NUL ends the string, as in bash', 'ab\\0cd', 'ab'],
    ['a NUL by hex, \\u or \\c ends it too', 'a\\x00b|c\\u0000d|e\\c@f', 'a'],
    ['a backslash at the very end stays', 'a\\', 'a\\'],
  ])('%s', (_what, body, decoded) => {
    expect(decodeAnsiC(body)).toBe(decoded);
  });

  it('decodes a long body in linear time', () => {
    const body = '\\x41'.repeat(100_000);
    expect(decodeAnsiC(body)).toBe('A'.repeat(100_000));
  });
});

// [command, what the destructive reason must contain, why]
const destructive: readonly (readonly [string, string, string])[] = [
  ["echo $'\\'' ; rm -rf ~ #'", 'home folder', "\\' does not end the string; the rest runs"],
  ["echo $'\\\\\\'' ; rm -rf / #'", 'file-system root', "\\\\ then \\', then the string ends"],
  ["echo $'\\\\' ; rm -rf / #'", 'file-system root', "\\\\' is a backslash and the end of the string"],
  ["echo $'\\'' ; :(){ :|:& };: #'", 'fork bomb', 'a fork bomb behind the same trick'],
  ["rm -rf $'\\x2f'", 'file-system root', 'a slash by hex'],
  ["rm -rf $'\\057etc'", 'system folder /etc', 'a slash by octal'],
  ["rm -rf $'\\u002e\\u002e'", 'above the workspace', '.. by \\u'],
  ["$'\\x72\\x6d' -rf /", 'file-system root', 'the command name itself decoded'],
  ["echo $(echo $'\\')' ; rm -rf ~)", 'home folder', "\\' does not close $(...) early either"],
  ["bash -c $'rm -rf \\x2f'", 'file-system root', 'a decoded bash -c script'],
  ['echo "$\'" ; rm -rf ~ ; echo "\'"', 'home folder', "$' inside double quotes is not ANSI-C quoting"],
  ['sh -c "echo \\$\'x\\\\\' ; rm -rf ~ ; #\'"', 'home folder', "sh may be dash, which reads $'x\\' as $ and 'x\\'"],
  ["echo $'\\' ; rm -rf ~", 'home folder', 'unterminated: also read the old, literal way'],
];

// [command, what the escape reason must contain, why]
const escaping: readonly (readonly [string, string, string])[] = [
  ["echo $'\\'' ; cat /etc/passwd #'", '"/etc/passwd" is an absolute path', "after \\'"],
  ["cat $'\\x2fetc\\x2fpasswd'", '"/etc/passwd" is an absolute path', 'slashes by hex'],
  ["cat $'\\057etc/passwd'", '"/etc/passwd" is an absolute path', 'a slash by octal'],
  ["cd $'..'", '".." leads outside', 'a quoted ..'],
  ["cat $'\\x2e\\x2e/secret'", '"../secret" leads outside', '.. by hex'],
  ["echo x > $'\\x2ftmp/x'", '"/tmp/x" is an absolute path', 'a redirection target'],
  ['cat $"/etc/passwd"', '"/etc/passwd" is an absolute path', 'bash drops the $ of $"..." (translated text)'],
  ["cat $'/etc/passwd", '"/etc/passwd" is an absolute path', "unterminated, like cat '/etc/passwd"],
];

// [command, why it is fine]
const legit: readonly (readonly [string, string])[] = [
  ["echo $'hello\\tworld'", 'a tab'],
  ["printf $'%s\\n' a b", 'a newline in a format'],
  ["echo $'it\\'s fine'", 'an escaped quote inside'],
  ["grep -n $'\\t' src/a.go", 'a tab as a pattern'],
  ["echo $'\\\\' ok", 'a lone backslash'],
  ["echo $'a\\x2fb'", 'a decoded relative path'],
  ['echo "$\'"', "$' inside double quotes is only text"],
  ["IFS=$'\\n' read -r line < list.txt", 'a newline as the separator'],
  ["git commit -m $'Fix reading ../x\\n\\nDon\\'t cd /'", 'one quoted word: paths mentioned only'],
  ["echo $'abc", "unterminated, like echo 'abc"],
  ["bash -c $'echo \\'hi\\''", 'a nested script that only prints'],
  ['echo $"hello"', 'translated text'],
];

describe('the fences read ANSI-C quoting as bash does', () => {
  for (const [command, reason, why] of destructive) {
    it(`flag ${JSON.stringify(command)} as destructive: ${why}`, () => {
      expect(checkDestructiveCommand(command)?.toLowerCase()).toContain(reason.toLowerCase());
    });
  }

  for (const [command, reason, why] of escaping) {
    it(`flag ${JSON.stringify(command)} as escaping: ${why}`, () => {
      expect(checkWorkspaceEscape(command)).toContain(reason);
    });
  }

  it('flag a protected path spelled with escapes', () => {
    expect(checkProtectedPaths("echo x > $'.cl\\x61w/grants.json'")).toContain('.claw/');
    expect(checkProtectedPaths("echo $'\\'' > .git/hooks/pre-commit #'")).toContain('.git/hooks');
  });

  for (const [command, why] of legit) {
    it(`pass ${JSON.stringify(command)}: ${why}`, () => {
      expect(checkDestructiveCommand(command)).toBeUndefined();
      expect(checkWorkspaceEscape(command)).toBeUndefined();
      expect(checkProtectedPaths(command)).toBeUndefined();
    });
  }

  it('stay linear on long ANSI-C input', () => {
    const long = 'a'.repeat(300_000);
    expect(checkWorkspaceEscape(`echo $'${"\\'".repeat(100_000)}`)).toBeUndefined();
    expect(checkDestructiveCommand(`echo $'${long}\\'' ; rm -rf / #'`)).toContain('file-system root');
    expect(checkWorkspaceEscape(`cat $'${'\\x2f'.repeat(100_000)}'`)).toContain('absolute path');
    expect(checkDestructiveCommand(`sh -c "${"$'\\\\'".repeat(50_000)}"`)).toBeUndefined();
    expect(checkDestructiveCommand(`echo ${"$'\\''".repeat(50_000)} ; rm -rf ~`)).toContain('home folder');
  });
});
