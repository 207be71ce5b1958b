import { describe, expect, it } from 'vitest';
import { checkDestructiveCommand, isDestructiveCommand } from '../src/index.js';

// [command, a word the reason must contain, why it is destructive]
const destructive: readonly (readonly [string, string, string])[] = [
  ['rm -rf /', 'file-system root', 'the classic'],
  ['rm -fr /', 'file-system root', 'flags in the other order'],
  ['rm -r -f /', 'file-system root', 'separate flags'],
  ['rm --recursive --force /', 'file-system root', 'long flags'],
  ['RM   -RF    /', 'file-system root', 'case and whitespace are folded'],
  ['rm -rf /*', 'file-system root', 'everything under the root'],
  ['rm -rf //', 'file-system root', 'doubled slash'],
  ['rm -rf ~', 'home folder', 'the home folder'],
  ['rm -rf ~/', 'home folder', 'the home folder with a slash'],
  ['rm -rf $HOME', 'home folder', 'the home folder by variable'],
  ['rm -rf "${HOME}"/*', 'home folder', 'braced, quoted variable and a glob'],
  ['rm -rf ..', 'above the workspace', 'the parent of the workspace'],
  ['rm -rf ../..', 'above the workspace', 'two levels up'],
  ['rm -rf /etc', 'system folder /etc', 'a top-level system folder'],
  ['rm -r -- /usr/', 'system folder /usr', 'after -- with a trailing slash'],
  ['rm -rf /usr/../', 'file-system root', 'a .. that climbs back to the root'],
  ['rm --no-preserve-root -rf /tmp/x', 'no-preserve-root', 'asks to be allowed to delete /'],
  ['sudo rm -rf /', 'file-system root', 'behind sudo'],
  ['/bin/rm -rf /', 'file-system root', 'by absolute program path'],
  ['\\rm -rf /', 'file-system root', 'alias-bypassing backslash'],
  ['mkfs.ext4 /dev/sda1', 'formats', 'make a file system'],
  ['mkfs -t xfs /dev/nvme0n1', 'formats', 'plain mkfs'],
  ['dd if=/dev/zero of=/dev/sda bs=1M', 'device /dev/sda', 'overwrite a disk'],
  ['dd if=x.img of=/dev/disk2', 'device /dev/disk2', 'write an image onto a disk'],
  ['shutdown -h now', 'shutdown', 'power off'],
  ['reboot', 'reboot', 'restart'],
  ['halt', 'halt', 'halt'],
  ['poweroff', 'poweroff', 'power off'],
  ['init 0', 'init 0', 'runlevel 0'],
  ['init 6', 'init 6', 'runlevel 6'],
  ['systemctl reboot', 'systemctl reboot', 'systemd restart'],
  [':(){ :|:& };:', 'fork bomb', 'the classic fork bomb'],
  [':(){:|:&};:', 'fork bomb', 'without spaces'],
  [': ( ) {  : | : &  } ; :', 'fork bomb', 'with extra spaces'],
  ['bomb(){ bomb|bomb& };bomb', 'fork bomb', 'a named fork bomb'],
  ['chmod -R 777 /', 'recursive chmod', 'open every file to everyone'],
  ['chown -R nobody:nogroup /', 'recursive chown', 'give every file away'],
  ['echo x > /dev/sda', 'device /dev/sda', 'redirect onto a disk'],
  ['cat image.iso >/dev/sdb', 'device /dev/sdb', 'redirect without a space'],
  ['wipefs -a /dev/sda', 'wipefs', 'erase file-system signatures'],
  ['shred -n 3 /dev/sda', 'shred', 'shred a device'],
  ['ls && rm -rf /', 'file-system root', 'second command of an && list'],
  ['true; reboot', 'reboot', 'second command of a ; list'],
  ['false || shutdown now', 'shutdown', 'after ||'],
  ['ls | sudo reboot', 'reboot', 'in a pipeline'],
  ['echo hi\nrm -rf ~', 'home folder', 'on the next line'],
  ['echo $(rm -rf /)', 'file-system root', 'inside $(...)'],
  ['echo `reboot`', 'reboot', 'inside backticks'],
  ["bash -c 'rm -rf /'", 'file-system root', 'inside bash -c'],
  ['sh -c "shutdown now"', 'shutdown', 'inside sh -c'],
  ["bash -lc ':(){ :|:& };:'", 'fork bomb', 'fork bomb inside bash -lc'],
  ['eval rm -rf /', 'file-system root', 'through eval'],
  ["eval 'reboot'", 'reboot', 'through eval of a quoted string'],
  ['env FOO=1 timeout 5 rm -rf /', 'file-system root', 'behind env and timeout'],
  ['find / -delete', 'find -delete', 'find deleting from the root'],
  ['find . -name x -exec rm -rf / \\;', 'file-system root', 'inside find -exec'],
  ['kill -9 -1', 'every process', 'kill every process'],
  ['if true; then rm -rf /; fi', 'file-system root', 'inside an if'],
  ['bash <<< "rm -rf /"', 'file-system root', 'a here-string fed to a shell'],
];

// [command, why it is harmless]
const harmless: readonly (readonly [string, string])[] = [
  ['grep shutdown file.txt', 'the word is an argument of grep'],
  ['echo "rm -rf /"', 'the command is only printed'],
  ["echo 'reboot now'", 'printed, single quotes'],
  ['git commit -m "reboot fix"', 'a commit message'],
  ['cat reboot.md', 'a file named reboot'],
  ['rm -rf ./build', 'a folder inside the workspace'],
  ['rm -rf node_modules', 'a folder inside the workspace'],
  ['rm -rf dist/ coverage/', 'folders inside the workspace'],
  ['rm -rf ""', 'an empty name deletes nothing'],
  ['rm -f /tmp/x.txt', 'not recursive (the escape fence judges the path)'],
  ['rm -rf /tmp/claw-build', 'a deep path, not a top-level folder'],
  ['ls -la /', 'listing the root is not destructive'],
  ['dd if=/dev/zero of=/dev/null bs=1M count=1', 'writing to /dev/null'],
  ['dd if=/dev/sda of=disk.img', 'reading from a device into a file'],
  ['npm run shutdown-server', 'a script whose name mentions shutdown'],
  ['echo x > /dev/null 2>&1', 'redirect to /dev/null'],
  ['systemctl status nginx', 'a read-only systemctl verb'],
  ['chmod -R 755 ./scripts', 'recursive chmod inside the workspace'],
  ['chmod 644 /etc/hosts', 'not recursive and not a whole tree'],
  ['git log --grep=":(){ :|:& };:"', 'a fork bomb only quoted in an argument'],
  ['man mkfs', 'reading the manual'],
  ['kill -1 1234', 'SIGHUP to one process'],
  ['find . -name "*.tmp" -delete', 'find -delete inside the workspace'],
  ["bash -c 'echo rm -rf /'", 'the nested script only prints'],
  ['cat <<EOF\nrm -rf /\nEOF', 'a here-document body is data, not a command'],
  ['tar -czf out.tgz src # then reboot', 'a comment'],
  ['mkdir -p reboot && cd reboot', 'a folder named reboot'],
];

describe('checkDestructiveCommand: destructive commands (SBX-2)', () => {
  it('has a table of at least 25 rows', () => {
    expect(destructive.length).toBeGreaterThanOrEqual(25);
  });

  for (const [command, reason, why] of destructive) {
    it(`flags ${JSON.stringify(command)}: ${why}`, () => {
      const found = checkDestructiveCommand(command);
      expect(found).toBeTypeOf('string');
      expect(found?.toLowerCase()).toContain(reason.toLowerCase());
      expect(isDestructiveCommand(command)).toBe(true);
    });
  }
});

describe('checkDestructiveCommand: harmless commands (SBX-2)', () => {
  it('has a table of at least 15 rows', () => {
    expect(harmless.length).toBeGreaterThanOrEqual(15);
  });

  for (const [command, why] of harmless) {
    it(`passes ${JSON.stringify(command)}: ${why}`, () => {
      expect(checkDestructiveCommand(command)).toBeUndefined();
      expect(isDestructiveCommand(command)).toBe(false);
    });
  }
});

describe('checkDestructiveCommand: odd input (SBX-2)', () => {
  it('passes empty and blank text', () => {
    expect(checkDestructiveCommand('')).toBeUndefined();
    expect(checkDestructiveCommand('  \n\t ')).toBeUndefined();
  });

  it('stops reading at a nesting depth cap instead of recursing forever', () => {
    let command = 'echo hi';
    for (let depth = 0; depth < 50; depth += 1) command = `echo $(${command})`;
    expect(checkDestructiveCommand(command)).toBeUndefined();
  });

  it('survives unterminated quotes and substitutions', () => {
    expect(checkDestructiveCommand('echo "unterminated')).toBeUndefined();
    expect(checkDestructiveCommand('echo $(rm -rf /')).toContain('file-system root');
  });
});
