import { describe, expect, it } from 'vitest';
import { checkWorkspaceEscape, commandEscapesWorkspace } from '../src/index.js';

// [command, a word the reason must contain, why it escapes]
const escaping: readonly (readonly [string, string, string])[] = [
  ['cat /etc/passwd', '"/etc/passwd" is an absolute path', 'reads a system file'],
  ['cat /x', '"/x" is an absolute path', 'any absolute argument'],
  ['ls /', '"/" is an absolute path', 'the root itself'],
  ['cp a.txt /tmp/', '"/tmp/" is an absolute path', 'copies out of the workspace'],
  ['cat "/etc/passwd"', 'absolute path', 'quoting does not hide it'],
  ['echo x > /etc/hosts', '"/etc/hosts" is an absolute path', 'a redirection target'],
  ['sort <  /etc/shadow', 'absolute path', 'an input redirection'],
  ['ls 2>/tmp/err.log', '"/tmp/err.log"', 'a stderr redirection to a real file'],
  ['cat ~/.ssh/id_rsa', 'home folder', 'a tilde path'],
  ['ls ~', 'home folder', 'bare tilde'],
  ['ls ~root', 'home folder', 'another user\'s home'],
  ['cat $HOME/.bashrc', '$HOME', 'the home variable'],
  ['cat "${HOME}/.npmrc"', '$HOME', 'the braced home variable in double quotes'],
  ['cd', 'no argument', 'cd alone goes home'],
  ['cd /', 'absolute path', 'cd to the root'],
  ['cd /usr/lib', 'absolute path', 'cd to an absolute folder'],
  ['cd ~', 'home folder', 'cd home'],
  ['cd -', 'previous folder', 'cd back to wherever we were'],
  ['cd ..', '".." leads outside', 'cd to the parent'],
  ['cat ../x', '"../x" leads outside', 'one level up'],
  ['ls a/../../b', '"a/../../b" leads outside', 'down one, up two'],
  ['cat ./../secret', 'leads outside', 'dot then up'],
  ['git -C .. status', 'leads outside', 'an option value that is a path'],
  ['tar -czf out.tgz --directory=/etc .', '"/etc" is an absolute path', 'a --key=value option'],
  ['dd if=/dev/sda of=disk.img', '"/dev/sda" is an absolute path', 'a key=value operand'],
  ['cd src && cat ../../x', 'leads outside', 'judged from the root, whatever cd did'],
  ['ls; cat /etc/passwd', 'absolute path', 'the second command of a list'],
  ['echo $(cat /etc/passwd)', 'absolute path', 'inside $(...)'],
  ['echo `ls ..`', 'leads outside', 'inside backticks'],
  ["bash -c 'cat /etc/passwd'", 'absolute path', 'inside bash -c'],
  ['eval "cd ~"', 'home folder', 'inside eval'],
  ['diff <(ls /etc) a.txt', 'absolute path', 'inside a process substitution'],
  ['FOO=/etc/x make', 'absolute path', 'an assignment value'],
  ['cat $PWD/../x', 'leads outside', '$PWD is the workspace root, .. leaves it'],
  ['pushd', 'no argument', 'pushd alone'],
  ['find / -name x', 'absolute path', 'find from the root'],
  ['./../../tool --help', 'leads outside', 'a program above the workspace'],
  ['gcc -I/usr/include x.c', '"/usr/include" is an absolute path', 'a path glued to an option'],
  ['tar -xf x.tar -C ../out', '"../out" leads outside', 'an option value above the root'],
  ['curl file:///etc/passwd', 'file URL', 'a file URL reads the local disk'],
  ['echo hi >> ~/.bashrc', 'home folder', 'appending to a file at home'],
];

// [command, why it stays inside]
const legit: readonly (readonly [string, string])[] = [
  ['go test ./...', 'three dots is not a .. segment'],
  ['ls -la', 'options only'],
  ['cat a.go', 'a file in the workspace'],
  ['grep -r foo .', 'the workspace itself'],
  ['npm test', 'no paths'],
  ['git status', 'no paths'],
  ['find . -name x', 'searches the workspace'],
  ['node --version', 'an option'],
  ['cat "my file.txt"', 'a quoted name with a space'],
  ["cat 'ünï cødé.md'", 'a non-ASCII name'],
  ['echo a/b', 'a relative path'],
  ['curl http://127.0.0.1:8080/x', 'a URL is not a path'],
  ['git clone https://example.com/org/repo.git vendor/repo', 'a URL and a relative folder'],
  ['/bin/ls -la src', 'a program named by absolute path in /bin'],
  ["sed -i 's/a/b/' f.txt", 'a sed expression with slashes'],
  ['ls 2>/dev/null', 'stderr to the sink'],
  ['ls >/dev/null 2>&1', 'stdout to the sink, stderr duplicated'],
  ['echo x > /dev/stderr', 'the process\'s own stream'],
  ['cat docs/../a.go', 'a .. that stays inside'],
  ['cd src', 'cd into a sub-folder'],
  ['cd src && make', 'cd into a sub-folder, then build'],
  ["echo '~' '$HOME'", 'quoted tilde and single-quoted $HOME are literal text'],
  ['/usr/bin/env node script.js', 'a program named by absolute path in /usr/bin'],
  ['git diff HEAD..main', 'a revision range, not a path'],
  ['cat ..hidden', 'a name that starts with two dots'],
  ['npm install file:./packages/x', 'an npm file: spec that stays inside'],
  ['cut -d/ -f2 paths.txt', 'a slash glued to an option is a delimiter, not a path'],
  ["awk -F/ '{print $1}' paths.txt", 'the same for awk'],
  ['cat my\\ file.txt', 'a backslash-escaped space'],
  ['ls .../..', 'a folder named ... and back up to the root'],
  ['echo "rm -rf ../"', 'a printed string'],
  ['cat <<EOF\n/etc/passwd\nEOF', 'here-document body is data'],
  ['python3 -m pytest -k "not slow"', 'options and a quoted expression'],
  ['cat $PWD/a.txt', '$PWD is the workspace root'],
];

describe('checkWorkspaceEscape: escaping commands (SBX-3)', () => {
  it('has a table of at least 25 rows', () => {
    expect(escaping.length).toBeGreaterThanOrEqual(25);
  });

  for (const [command, reason, why] of escaping) {
    it(`flags ${JSON.stringify(command)}: ${why}`, () => {
      const found = checkWorkspaceEscape(command);
      expect(found).toBeTypeOf('string');
      expect(found).toContain(reason);
      expect(commandEscapesWorkspace(command)).toBe(true);
    });
  }
});

describe('checkWorkspaceEscape: commands that stay inside (SBX-3)', () => {
  it('has a table of at least 20 rows', () => {
    expect(legit.length).toBeGreaterThanOrEqual(20);
  });

  for (const [command, why] of legit) {
    it(`passes ${JSON.stringify(command)}: ${why}`, () => {
      expect(checkWorkspaceEscape(command)).toBeUndefined();
      expect(commandEscapesWorkspace(command)).toBe(false);
    });
  }
});
