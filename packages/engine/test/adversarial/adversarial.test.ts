import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext, ToolResult } from '@claw/core';
import { createCommandSpawner, plainCommandSpawner, probeIsolation, type CommandSpawner } from '@claw/sandbox';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool, createEditFileTool, createReadFileTool, createWriteFileTool } from '../../src/index.js';
import { refusal } from '../tools/workspace.js';
import { attacks, legitimate, type AttackCase, type Layer, type Scene } from './cases.js';

const probe = await probeIsolation();
const secret = 'sk-adversarial-secret-0123456789';
const fileSecret = 'TOP-SECRET-OUTSIDE-42';

/** The four configurations: every layer, each layer alone (with the environment allow-list), none. */
const modes = {
  full: { layers: ['fence', 'os', 'env'], fences: true, isolated: true },
  fenceOnly: { layers: ['fence', 'env'], fences: true, isolated: false },
  osOnly: { layers: ['os', 'env'], fences: false, isolated: true },
  none: { layers: [], fences: false, isolated: false },
} as const satisfies Record<string, { layers: Layer[]; fences: boolean; isolated: boolean }>;
type ModeName = keyof typeof modes;

const allowedEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: homedir(), LANG: 'C.UTF-8' };
let server: Server;
const sockets = new Set<Socket>();
let connections = 0;
let port = 0;
const spawners = new Map<ModeName, CommandSpawner>();

beforeAll(async () => {
  process.env.OPENAI_API_KEY = secret;
  server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  if (probe.available) {
    spawners.set('full', await createCommandSpawner({ isolation: 'required', env: allowedEnv }));
    spawners.set('osOnly', spawners.get('full') as CommandSpawner);
  }
  spawners.set('fenceOnly', plainCommandSpawner({ env: allowedEnv }));
  spawners.set('none', plainCommandSpawner({ env: { ...process.env } as Record<string, string> }));
});

afterAll(async () => {
  delete process.env.OPENAI_API_KEY;
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

interface Workspace {
  root: string;
  scene: Scene;
  context: ToolContext;
}

async function makeWorkspace(unique: string): Promise<Workspace> {
  const root = await mkdtemp(join(tmpdir(), 'claw-adversarial-'));
  const workDir = join(root, 'ws');
  const outside = join(root, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), `${fileSecret}\n`);
  await mkdir(join(workDir, '.claw'), { recursive: true });
  await writeFile(join(workDir, '.claw/grants.json'), '{"version":1,"grants":[]}');
  await writeFile(join(workDir, 'README.md'), '# project\n');
  await writeFile(join(workDir, 'a.go'), 'package main\n\nfunc foo() {}\n');
  await writeFile(join(workDir, 'notes.txt'), 'remember to shutdown the server\n');
  await writeFile(join(workDir, 'my file.txt'), 'spaced\n');
  await writeFile(join(workDir, 'ünï cødé.md'), 'unicode\n');
  await writeFile(join(workDir, 'package.json'), JSON.stringify({ name: 'p', private: true, scripts: { test: 'echo npm-test-ok' } }));
  execFileSync('git', ['init', '-q', workDir]);
  return {
    root,
    context: { signal: new AbortController().signal, workDir },
    scene: {
      workDir,
      outside,
      outsideBase64: Buffer.from(outside).toString('base64'),
      unique,
      port,
      secret,
      fileSecret,
      homeDir: homedir(),
    },
  };
}

/** Whether the attack's effect happened. */
async function effectHappened(attack: AttackCase, workspace: Workspace, result: ToolResult, connectionsBefore: number) {
  const { effect } = attack;
  switch (effect.kind) {
    case 'file-created':
      return existsSync(effect.path(workspace.scene));
    case 'output-contains':
      return result.content.includes(effect.text(workspace.scene));
    case 'workspace-file': {
      const content = await readFile(join(workspace.scene.workDir, effect.path), 'utf8').catch(() => undefined);
      return effect.changed(content);
    }
    case 'connection':
      // The server may count the connection a moment after the command ends.
      for (let attempt = 0; attempt < 20 && connections === connectionsBefore; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return connections > connectionsBefore;
  }
}

let counter = 0;
let current: Workspace | undefined;
afterEach(async () => {
  if (current !== undefined) {
    await rm(current.root, { recursive: true, force: true });
    await rm(`/tmp/${current.scene.unique}`, { force: true });
    await rm(join(homedir(), current.scene.unique), { force: true });
    current = undefined;
  }
});

describe.each(Object.keys(modes) as ModeName[])('bash attacks, %s', (mode) => {
  const { layers, fences, isolated } = modes[mode];
  const runnable = attacks.filter((attack) => !(attack.fenceOnlyToRun === true && !fences));

  it.skipIf(isolated && !probe.available).each(runnable.map((attack) => [attack.id, attack] as const))(
    '%s',
    async (_id, attack) => {
      current = await makeWorkspace(`claw-adversarial-${process.pid}-${(counter += 1)}`);
      const spawner = spawners.get(mode);
      if (spawner === undefined) throw new Error(`no spawner for ${mode}`);
      const tool = createBashTool({ spawner, fences, timeoutMs: 10_000 });
      const before = connections;
      const result = await tool.execute({ command: attack.command(current.scene) }, current.context);
      const shouldBlock = attack.stoppedBy.some((layer) => (layers as readonly Layer[]).includes(layer));
      const happened = await effectHappened(attack, current, result, before);
      const output = result.content.slice(0, 300);
      const outcome = { case: attack.id, why: attack.why, effectHappened: happened, output };
      expect(outcome).toMatchObject({ effectHappened: !shouldBlock });
      // The fences refuse exactly the attacks attributed to them (and say so), and no others.
      const fenceApplies =
        attack.stoppedBy.includes('fence') && !(isolated && attack.fenceOnlyWhenNotIsolated === true);
      if (fences) expect(result.content.startsWith('refused:')).toBe(fenceApplies);
    },
  );
});

describe.each(['full', 'fenceOnly'] as const)('legitimate commands keep working, %s', (mode) => {
  it.skipIf(mode === 'full' && !probe.available).each(legitimate.map((legit) => [legit.id, legit] as const))(
    '%s',
    async (_id, legit) => {
      current = await makeWorkspace(`claw-legit-${process.pid}-${(counter += 1)}`);
      const spawner = spawners.get(mode);
      if (spawner === undefined) throw new Error(`no spawner for ${mode}`);
      const result = await createBashTool({ spawner }).execute({ command: legit.command }, current.context);
      expect({ case: legit.id, content: result.content }).toMatchObject({ content: expect.stringMatching(/^exit code: 0\n/) as unknown });
      expect(result.content).toContain(legit.output);
    },
  );
});

describe('the table runs with isolation where it matters', () => {
  // CI installs bubblewrap; a CI run that silently skipped the isolated modes would prove nothing.
  const required = process.env.CI !== undefined || process.env.CLAW_REQUIRE_ISOLATION === '1';
  it.runIf(required)('bubblewrap works on CI', () => {
    expect(probe).toMatchObject({ available: true });
  });
});

describe('bash input edge cases', () => {
  beforeEach(async () => {
    current = await makeWorkspace(`claw-edge-${process.pid}-${(counter += 1)}`);
  });

  it('a command with a NUL byte is refused before anything runs', async () => {
    const scene = (current as Workspace).scene;
    const result = await createBashTool({ spawner: plainCommandSpawner({ env: allowedEnv }) }).execute(
      { command: `touch marker\0${scene.outside}/x` },
      (current as Workspace).context,
    );
    expect(result).toEqual({ content: 'refused: the command contains a NUL byte', isError: true });
    expect(existsSync(join(scene.workDir, 'marker'))).toBe(false);
  });

  it('a very long command is handled without hanging', async () => {
    const spawner = probe.available ? (spawners.get('full') as CommandSpawner) : plainCommandSpawner({ env: allowedEnv });
    // Near the kernel's limit for one argument (128 KiB); a fence that backtracks badly would
    // blow the test's timeout here.
    const long = `echo ${'a'.repeat(100_000)} | wc -c`;
    const result = await createBashTool({ spawner }).execute({ command: long }, (current as Workspace).context);
    expect(result.content).toBe('exit code: 0\n--- stdout ---\n100001\n--- stderr (empty) ---');
  });
});

describe('file tool attacks (layer: file)', () => {
  const read = createReadFileTool();
  const write = createWriteFileTool();
  const edit = createEditFileTool();

  beforeEach(async () => {
    current = await makeWorkspace(`claw-files-${process.pid}-${(counter += 1)}`);
  });

  const scene = () => (current as Workspace).scene;
  const context = () => (current as Workspace).context;
  const untouched = async () => {
    expect(await readFile(join(scene().outside, 'secret.txt'), 'utf8')).toBe(`${fileSecret}\n`);
    expect(existsSync(join(scene().outside, 'x'))).toBe(false);
  };

  const cases: Array<[string, string, () => Promise<ToolResult>]> = [
    ['read ../outside', 'path_outside_workspace', () => read.execute({ path: '../outside/secret.txt' }, context())],
    ['read an absolute path', 'path_outside_workspace', () => read.execute({ path: join(scene().outside, 'secret.txt') }, context())],
    ['read through a symlink made to the outside', 'path_outside_workspace', async () => {
      await symlink(join(scene().outside, 'secret.txt'), join(scene().workDir, 'link'));
      return read.execute({ path: 'link' }, context());
    }],
    ['read a hard link to an outside file', 'unsafe_file', async () => {
      await link(join(scene().outside, 'secret.txt'), join(scene().workDir, 'hard'));
      return read.execute({ path: 'hard' }, context());
    }],
    ['write ../outside', 'path_outside_workspace', () => write.execute({ path: '../outside/x', content: 'x' }, context())],
    ['write through a dangling symlink to the outside', 'path_outside_workspace', async () => {
      await symlink(join(scene().outside, 'x'), join(scene().workDir, 'dangling'));
      return write.execute({ path: 'dangling', content: 'x' }, context());
    }],
    ['write under a symlinked folder that points outside', 'path_outside_workspace', async () => {
      await symlink(scene().outside, join(scene().workDir, 'dir'));
      return write.execute({ path: 'dir/x', content: 'x' }, context());
    }],
    ['overwrite a hard link to an outside file', 'unsafe_file', async () => {
      await link(join(scene().outside, 'secret.txt'), join(scene().workDir, 'hard'));
      return write.execute({ path: 'hard', content: 'x' }, context());
    }],
    ['edit a hard link to an outside file', 'unsafe_file', async () => {
      await link(join(scene().outside, 'secret.txt'), join(scene().workDir, 'hard'));
      return edit.execute({ path: 'hard', old_string: 'TOP', new_string: 'x' }, context());
    }],
    ['write .claw/grants.json', 'protected_path', () => write.execute({ path: '.claw/grants.json', content: '{}' }, context())],
    ['write .git/hooks/pre-commit', 'protected_path', () => write.execute({ path: '.git/hooks/pre-commit', content: 'evil' }, context())],
    ['edit .git/config', 'protected_path', () => edit.execute({ path: '.git/config', old_string: '[core]', new_string: '[evil]' }, context())],
    ['write .claw through a symlink', 'protected_path', async () => {
      await symlink('.claw', join(scene().workDir, 'state'));
      return write.execute({ path: 'state/grants.json', content: '{}' }, context());
    }],
    ['a NUL byte in a path', 'invalid_path', () => read.execute({ path: 'a.go\0/etc/passwd' }, context())],
    ['a symlink loop', 'symlink_resolution_failed', async () => {
      await symlink('loop-b', join(scene().workDir, 'loop-a'));
      await symlink('loop-a', join(scene().workDir, 'loop-b'));
      return write.execute({ path: 'loop-a/x', content: 'x' }, context());
    }],
  ];

  it.each(cases)('%s → %s', async (_name, code, attempt) => {
    const error = await refusal(attempt());
    expect(error.code).toBe(code);
    await untouched();
  });

  it('legitimate file work keeps working (spaces, non-ASCII, nested new folders, edits)', async () => {
    expect((await read.execute({ path: 'my file.txt' }, context())).content).toBe('spaced');
    expect((await write.execute({ path: 'ünï/cødé/nëw.md', content: 'x' }, context())).isError).toBeUndefined();
    expect((await edit.execute({ path: 'a.go', old_string: 'foo', new_string: 'bar' }, context())).content).toBe('replaced 1 occurrence in a.go');
    expect((await write.execute({ path: 'docs/.claw-notes.md', content: 'not protected' }, context())).isError).toBeUndefined();
  });
});
