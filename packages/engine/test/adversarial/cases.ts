/**
 * The adversarial table (SBX-1..4): each row is an attack (or a legitimate command that must keep
 * working), run through the real tool, with the layers that are supposed to stop it:
 *
 * - `fence`: the text fences before a command runs (destructive, escaping, protected paths);
 * - `os`: bubblewrap isolation with its seccomp filter;
 * - `env`: the allow-listed environment commands get (no secret of the parent in it);
 * - `file`: the hardened file tools (descriptor checks, hard links, protected paths).
 *
 * The test runs every bash row under four configurations and checks that the attack is stopped
 * exactly when at least one of its layers is on — and really succeeds when none is, which proves
 * both the attack and the attribution.
 */

export type Layer = 'fence' | 'os' | 'env' | 'file';

export interface Scene {
  /** The workspace root. */
  workDir: string;
  /** A folder beside the workspace, with `secret.txt` in it. */
  outside: string;
  /** base64 of `outside`, for paths the fences cannot read. */
  outsideBase64: string;
  /** A unique file name for writes to the host's /tmp and home. */
  unique: string;
  /** The port of a TCP server on 127.0.0.1 that counts connections. */
  port: number;
  /** The secret put in the parent's environment as OPENAI_API_KEY. */
  secret: string;
  /** A second secret, in `outside/secret.txt`. */
  fileSecret: string;
  homeDir: string;
}

/** How to tell whether an attack got through. */
export type Effect =
  | { kind: 'file-created'; path: (scene: Scene) => string }
  | { kind: 'output-contains'; text: (scene: Scene) => string }
  | { kind: 'workspace-file'; path: string; changed: (content: string | undefined) => boolean }
  | { kind: 'connection' };

export interface AttackCase {
  id: string;
  why: string;
  command: (scene: Scene) => string;
  effect: Effect;
  stoppedBy: Layer[];
  /** Never run without the fences (it would do real damage on the host or the machine). */
  fenceOnlyToRun?: boolean;
  /**
   * The fence that stops it (protected paths) applies only when commands are not isolated; under
   * isolation those paths are read-only and the OS stops it.
   */
  fenceOnlyWhenNotIsolated?: boolean;
}

export interface LegitCase {
  id: string;
  why: string;
  command: string;
  /** Text the output must contain. */
  output: string;
}

const outsideFile = (name: string) => (scene: Scene) => `${scene.outside}/${name}`;
const createdOutside = (name: string): Effect => ({ kind: 'file-created', path: outsideFile(name) });
const leaksFileSecret: Effect = { kind: 'output-contains', text: (scene) => scene.fileSecret };
const leaksEnvSecret: Effect = { kind: 'output-contains', text: (scene) => scene.secret };
const computedOutside = (scene: Scene) => `"$(echo ${scene.outsideBase64} | base64 -d)"`;
const dotDot = '"$(printf \'%s%s\' . .)"';
const fileNowContains = (path: string, text: string): Effect => ({
  kind: 'workspace-file',
  path,
  changed: (content) => content?.includes(text) === true,
});

export const attacks: AttackCase[] = [
  // Writing outside the workspace.
  { id: 'w-absolute', why: 'absolute path in a redirection', command: (s) => `echo pwned > ${s.outside}/w1`, effect: createdOutside('w1'), stoppedBy: ['fence', 'os'] },
  { id: 'w-double-quoted', why: 'quoting does not hide an absolute path from the tokenizer', command: (s) => `echo pwned > "${s.outside}/w2"`, effect: createdOutside('w2'), stoppedBy: ['fence', 'os'] },
  { id: 'w-single-quoted', why: 'single quotes likewise', command: (s) => `echo pwned > '${s.outside}/w3'`, effect: createdOutside('w3'), stoppedBy: ['fence', 'os'] },
  { id: 'w-dotdot', why: '.. leaves the workspace', command: () => 'echo pwned > ../outside/w4', effect: createdOutside('w4'), stoppedBy: ['fence', 'os'] },
  { id: 'w-nested-dotdot', why: 'a/../.. leaves it too', command: () => 'mkdir -p a && echo pwned > a/../../outside/w5', effect: createdOutside('w5'), stoppedBy: ['fence', 'os'] },
  { id: 'w-cd-dotdot', why: 'cd .. then a relative path', command: () => 'cd .. && echo pwned > outside/w6', effect: createdOutside('w6'), stoppedBy: ['fence', 'os'] },
  { id: 'w-eval', why: 'eval of a quoted string is read as a command', command: (s) => `eval "echo pwned > ${s.outside}/w7"`, effect: createdOutside('w7'), stoppedBy: ['fence', 'os'] },
  { id: 'w-bash-c', why: 'bash -c of a quoted string', command: (s) => `bash -c 'echo pwned > ${s.outside}/w8'`, effect: createdOutside('w8'), stoppedBy: ['fence', 'os'] },
  { id: 'w-substitution', why: '$(...) with a literal absolute path', command: (s) => `echo pwned > $(echo ${s.outside})/w9`, effect: createdOutside('w9'), stoppedBy: ['fence', 'os'] },
  { id: 'w-backticks', why: 'backticks likewise', command: (s) => `echo pwned > \`echo ${s.outside}\`/w10`, effect: createdOutside('w10'), stoppedBy: ['fence', 'os'] },
  { id: 'w-base64-path', why: 'a path computed at run time: no text fence can see it', command: (s) => `echo pwned > ${computedOutside(s)}/w11`, effect: createdOutside('w11'), stoppedBy: ['os'] },
  { id: 'w-printf-dots', why: '.. assembled by printf', command: () => `echo pwned > ${dotDot}/outside/w12`, effect: createdOutside('w12'), stoppedBy: ['os'] },
  { id: 'w-variable', why: 'a variable holding ..', command: () => 'D=.; echo pwned > $D$D/outside/w13', effect: createdOutside('w13'), stoppedBy: ['os'] },
  { id: 'w-python', why: 'an interpreter one-liner (python)', command: (s) => `python3 -c "open('${s.outside}/w14', 'w').write('x')"`, effect: createdOutside('w14'), stoppedBy: ['os'] },
  { id: 'w-node', why: 'an interpreter one-liner (node)', command: (s) => `node -e "require('fs').writeFileSync('${s.outside}/w15', 'x')"`, effect: createdOutside('w15'), stoppedBy: ['os'] },
  { id: 'w-perl', why: 'an interpreter one-liner (perl)', command: (s) => `perl -e 'open(my $f, ">", "${s.outside}/w16")'`, effect: createdOutside('w16'), stoppedBy: ['os'] },
  { id: 'w-tee', why: 'tee onto an absolute path', command: (s) => `echo pwned | tee ${s.outside}/w17`, effect: createdOutside('w17'), stoppedBy: ['fence', 'os'] },
  { id: 'w-cp', why: 'cp onto an absolute path', command: (s) => `cp README.md ${s.outside}/w18`, effect: createdOutside('w18'), stoppedBy: ['fence', 'os'] },
  { id: 'w-symlink-abs', why: 'a symlink made to the outside, then written through', command: (s) => `ln -s ${s.outside} out && echo pwned > out/w19`, effect: createdOutside('w19'), stoppedBy: ['fence', 'os'] },
  { id: 'w-symlink-dotdot', why: 'a relative symlink out', command: () => 'ln -s ../outside out && echo pwned > out/w20', effect: createdOutside('w20'), stoppedBy: ['fence', 'os'] },
  { id: 'w-symlink-computed', why: 'a symlink to a computed path', command: (s) => `ln -s ${computedOutside(s)} out && echo pwned > out/w21`, effect: createdOutside('w21'), stoppedBy: ['os'] },
  { id: 'w-heredoc', why: 'a here-doc into an absolute path', command: (s) => `cat > ${s.outside}/w22 <<EOF\npwned\nEOF`, effect: createdOutside('w22'), stoppedBy: ['fence', 'os'] },
  { id: 'w-heredoc-computed', why: 'a here-doc into a computed path', command: () => `cat > ${dotDot}/outside/w23 <<EOF\npwned\nEOF`, effect: createdOutside('w23'), stoppedBy: ['os'] },
  { id: 'w-touch', why: 'touch an absolute path', command: (s) => `touch ${s.outside}/w24`, effect: createdOutside('w24'), stoppedBy: ['fence', 'os'] },
  { id: 'w-dd', why: 'dd of= an absolute path', command: (s) => `dd if=README.md of=${s.outside}/w25 status=none`, effect: createdOutside('w25'), stoppedBy: ['fence', 'os'] },
  { id: 'w-find-exec', why: 'find -exec cp to an absolute path', command: (s) => `find . -name README.md -exec cp {} ${s.outside}/w26 \\;`, effect: createdOutside('w26'), stoppedBy: ['fence', 'os'] },
  { id: 'w-xargs', why: 'xargs gets the path from echo', command: (s) => `echo ${s.outside}/w27 | xargs touch`, effect: createdOutside('w27'), stoppedBy: ['fence', 'os'] },
  { id: 'w-glob', why: 'a glob that names the outside folder', command: (s) => `cp README.md ${s.outside.replace(/outside$/, 'outsid?')}`, effect: createdOutside('README.md'), stoppedBy: ['fence', 'os'] },
  { id: 'w-host-tmp', why: 'the host /tmp', command: (s) => `echo pwned > /tmp/${s.unique}`, effect: { kind: 'file-created', path: (s) => `/tmp/${s.unique}` }, stoppedBy: ['fence', 'os'] },
  { id: 'w-host-tmp-computed', why: 'the host /tmp by a computed path', command: (s) => `echo pwned > "$(echo L3RtcA== | base64 -d)/${s.unique}"`, effect: { kind: 'file-created', path: (s) => `/tmp/${s.unique}` }, stoppedBy: ['os'] },
  { id: 'w-home-tilde', why: '~ is the home folder', command: (s) => `echo pwned > ~/${s.unique}`, effect: { kind: 'file-created', path: (s) => `${s.homeDir}/${s.unique}` }, stoppedBy: ['fence', 'os'] },
  { id: 'w-home-var', why: '$HOME', command: (s) => `echo pwned > $HOME/${s.unique}`, effect: { kind: 'file-created', path: (s) => `${s.homeDir}/${s.unique}` }, stoppedBy: ['fence', 'os'] },
  { id: 'w-home-brace', why: '${HOME}', command: (s) => `echo pwned > \${HOME}/${s.unique}`, effect: { kind: 'file-created', path: (s) => `${s.homeDir}/${s.unique}` }, stoppedBy: ['fence', 'os'] },
  { id: 'w-home-cd', why: 'cd with no argument goes home', command: (s) => `cd && echo pwned > ${s.unique}`, effect: { kind: 'file-created', path: (s) => `${s.homeDir}/${s.unique}` }, stoppedBy: ['fence', 'os'] },

  // Reading a secret outside the workspace.
  { id: 'r-absolute', why: 'cat an absolute path', command: (s) => `cat ${s.outside}/secret.txt`, effect: leaksFileSecret, stoppedBy: ['fence', 'os'] },
  { id: 'r-dotdot', why: 'cat through ..', command: () => 'cat ../outside/secret.txt', effect: leaksFileSecret, stoppedBy: ['fence', 'os'] },
  { id: 'r-computed', why: 'cat a computed path', command: (s) => `cat ${computedOutside(s)}/secret.txt`, effect: leaksFileSecret, stoppedBy: ['os'] },
  { id: 'r-python', why: 'python reads it', command: (s) => `python3 -c "print(open('${s.outside}/secret.txt').read())"`, effect: leaksFileSecret, stoppedBy: ['os'] },
  { id: 'r-glob', why: 'a glob through ..', command: () => 'cat ../outsid*/secret.txt', effect: leaksFileSecret, stoppedBy: ['fence', 'os'] },
  { id: 'r-symlink', why: 'a symlink made to the secret', command: (s) => `ln -s ${s.outside}/secret.txt s && cat s`, effect: leaksFileSecret, stoppedBy: ['fence', 'os'] },
  { id: 'r-symlink-computed', why: 'a symlink to a computed path', command: (s) => `ln -s ${computedOutside(s)}/secret.txt s && cat s`, effect: leaksFileSecret, stoppedBy: ['os'] },

  // The parent's secrets.
  { id: 'e-env', why: 'env lists the environment', command: () => 'env', effect: leaksEnvSecret, stoppedBy: ['env'] },
  { id: 'e-printenv', why: 'printenv of the key', command: () => 'printenv OPENAI_API_KEY', effect: leaksEnvSecret, stoppedBy: ['env'] },
  { id: 'e-expand', why: 'the variable expanded', command: () => 'echo "$OPENAI_API_KEY"', effect: leaksEnvSecret, stoppedBy: ['env'] },

  // Protected paths inside the workspace.
  { id: 'p-hook', why: 'plant a git hook', command: () => 'echo evil > .git/hooks/pre-commit', effect: fileNowContains('.git/hooks/pre-commit', 'evil'), stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-hook-cd', why: 'cd into the hooks first', command: () => 'cd .git/hooks && echo evil > post-checkout', effect: fileNowContains('.git/hooks/post-checkout', 'evil'), stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-hook-cp', why: 'copy a script in', command: () => 'echo evil > h && cp h .git/hooks/pre-push', effect: fileNowContains('.git/hooks/pre-push', 'evil'), stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-git-config', why: 'append to .git/config', command: () => 'echo "[evil]" >> .git/config', effect: fileNowContains('.git/config', '[evil]'), stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-git-config-cmd', why: 'git config writes .git/config without naming it', command: () => 'git config core.hooksPath evil', effect: fileNowContains('.git/config', 'hooksPath'), stoppedBy: ['os'] },
  { id: 'p-claw-grants', why: 'grant itself permissions', command: () => 'echo "{}" > .claw/grants.json', effect: fileNowContains('.claw/grants.json', '{}\n'), stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-claw-variable', why: '.claw assembled from a variable', command: () => 'P=.cl; echo "{}" > ${P}aw/grants.json', effect: fileNowContains('.claw/grants.json', '{}\n'), stoppedBy: ['os'] },
  { id: 'p-claw-remove', why: 'remove claw\'s state', command: () => 'rm -rf .claw', effect: { kind: 'workspace-file', path: '.claw/grants.json', changed: (content) => content === undefined }, stoppedBy: ['fence', 'os'], fenceOnlyWhenNotIsolated: true },
  { id: 'p-git-swap', why: 'move .git away and make a new one with its own hooks', command: () => 'mv .git .git-old && git init -q && echo evil > "$(printf .git/%s hooks)/pre-commit"', effect: fileNowContains('.git/hooks/pre-commit', 'evil'), stoppedBy: ['os'] },

  // The network.
  { id: 'n-dev-tcp', why: 'bash /dev/tcp', command: (s) => `echo hi > /dev/tcp/127.0.0.1/${s.port}`, effect: { kind: 'connection' }, stoppedBy: ['fence', 'os'] },
  { id: 'n-curl', why: 'curl to a local server', command: (s) => `curl -s -m 2 http://127.0.0.1:${s.port}/`, effect: { kind: 'connection' }, stoppedBy: ['os'] },
  { id: 'n-python', why: 'a python socket', command: (s) => `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${s.port})).send(b'x')"`, effect: { kind: 'connection' }, stoppedBy: ['os'] },
  { id: 'n-node', why: 'a node socket', command: (s) => `node -e "require('net').connect(${s.port}, '127.0.0.1').on('connect', function () { this.end('x'); })"`, effect: { kind: 'connection' }, stoppedBy: ['os'] },

  // Destructive commands: refused before they run; never run without the fences.
  { id: 'd-rm-root', why: 'rm -rf /', command: () => 'rm -rf /', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-rm-fr-home', why: 'rm -fr ~', command: () => 'rm -fr ~', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-rm-spaced', why: 'rm with odd spacing and case', command: () => 'RM  -R   -F   /', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-mkfs', why: 'mkfs', command: () => 'mkfs.ext4 /dev/sda1', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-dd-device', why: 'dd onto a disk', command: () => 'dd if=/dev/zero of=/dev/sda', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-fork-bomb', why: 'a fork bomb', command: () => ':(){ :|:& };:', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-shutdown', why: 'shutdown', command: () => 'shutdown -h now', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-reboot-chained', why: 'reboot after a harmless command', command: () => 'ls && reboot', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-chmod-root', why: 'chmod -R 777 /', command: () => 'chmod -R 777 /', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
  { id: 'd-in-substitution', why: 'rm -rf / inside $(...)', command: () => 'echo $(rm -rf /)', effect: createdOutside('never'), stoppedBy: ['fence'], fenceOnlyToRun: true },
];

export const legitimate: LegitCase[] = [
  { id: 'ls', why: 'list the workspace', command: 'ls -la', output: 'README.md' },
  { id: 'cat', why: 'read a file', command: 'cat a.go', output: 'package main' },
  { id: 'grep', why: 'search recursively', command: 'grep -r foo .', output: 'a.go' },
  { id: 'npm-test', why: 'run the project\'s tests', command: 'npm test --silent', output: 'npm-test-ok' },
  { id: 'git-status', why: 'git reads its repository', command: 'git status --short', output: '?? README.md' },
  { id: 'find', why: 'find by name', command: 'find . -name a.go', output: './a.go' },
  { id: 'spaces', why: 'a path with spaces', command: 'cat "my file.txt"', output: 'spaced' },
  { id: 'non-ascii', why: 'a non-ASCII name', command: 'cat \'ünï cødé.md\'', output: 'unicode' },
  { id: 'write-inside', why: 'write and read back inside', command: 'echo hi > out.txt && cat out.txt', output: 'hi' },
  { id: 'mkdir', why: 'nested folders inside', command: 'mkdir -p a/b && touch a/b/c && ls a/b', output: 'c' },
  { id: 'node', why: 'node runs', command: 'node -e "console.log(6 * 7)"', output: '42' },
  { id: 'python', why: 'python runs', command: 'python3 -c "print(6 * 7)"', output: '42' },
  { id: 'redirect-in', why: 'an input redirection', command: 'wc -l < a.go', output: '3' },
  { id: 'sed-in-place', why: 'edit in place', command: 'sed -i "s/foo/bar/" a.go && cat a.go', output: 'bar' },
  { id: 'dotdot-inside', why: '.. that stays inside', command: 'mkdir -p docs && cat docs/../a.go', output: 'package main' },
  { id: 'arithmetic', why: 'shell arithmetic', command: 'echo $((1 + 2))', output: '3' },
  { id: 'dev-null', why: 'discarding errors', command: 'cat missing 2>/dev/null || echo fine', output: 'fine' },
  { id: 'mention-shutdown', why: 'a word that names a command is not the command', command: 'grep shutdown notes.txt', output: 'shutdown the server' },
  { id: 'echo-rm', why: 'text that looks destructive', command: 'echo "rm -rf /"', output: 'rm -rf /' },
  { id: 'pipeline', why: 'a pipeline inside', command: 'ls | sort | head -n 1', output: '' },
];
