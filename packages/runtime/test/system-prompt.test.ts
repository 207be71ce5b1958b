import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScriptedProvider } from '@claw/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { findGitRepository, localDate } from '../src/index.js';
import { cleanUp, scriptedFactory, settings, tempWorkspace } from './helpers.js';

afterEach(cleanUp);

/** A git repository made by hand (no git program needed): `.git/HEAD` on `branch`. */
async function gitRepository(root: string, head = 'ref: refs/heads/feature/x\n'): Promise<void> {
  await mkdir(join(root, '.git'), { recursive: true });
  await writeFile(join(root, '.git/HEAD'), head);
}

function systemOf(provider: ScriptedProvider, call: number): string {
  const first = provider.calls[call]?.request.messages[0];
  expect(first?.role).toBe('system');
  return first?.content ?? '';
}

describe('what the model is told (REAL-1, REAL-2)', () => {
  it('sends claw\'s prompt, the environment and the instructions, the same in every request of a session', async () => {
    const root = await tempWorkspace('claw-prompt-');
    await gitRepository(root);
    await writeFile(join(root, 'AGENTS.md'), 'Use pnpm, never npm.\n');
    const workDir = join(root, 'sub');
    await mkdir(workDir);
    await writeFile(join(workDir, 'AGENTS.md'), 'Tests live in test/.\n');
    const { factory, provider } = scriptedFactory(
      [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'AGENTS.md' } }] },
        { text: 'first done' },
        { text: 'second done' },
      ],
      { now: () => new Date(2031, 0, 2, 23, 59) },
    );
    const runtime = await factory.createRuntime({ workDir, approval: 'ask' });
    expect((await runtime.start('what is this?').wait()).status).toBe('completed');
    expect((await runtime.start('and now?').wait()).status).toBe('completed');
    const system = systemOf(provider, 0);
    // Byte-identical across the requests of the session, tasks included (prefix caching).
    expect(systemOf(provider, 1)).toBe(system);
    expect(systemOf(provider, 2)).toBe(system);
    // Who it is, how to work, the tools, denials.
    expect(system).toMatch(/^You are claw, a coding agent\./);
    expect(system).toContain('# How to work');
    expect(system).toContain('- edit_file: replaces `old_string`');
    expect(system).toContain('set `timeout_ms`');
    expect(system).toContain('Do not repeat a denied call');
    // The environment block.
    expect(system).toContain(`Workspace root: ${workDir}\n`);
    expect(system).toContain('Date: 2031-01-02\n');
    expect(system).toContain(`Git: a git repository (root ${root}), on branch feature/x\n`);
    expect(system).toMatch(/\nPlatform: .+, (x64|arm64|[a-z0-9]+)\n/);
    expect(system).toContain('Bash: not isolated: commands run as the user, with the network');
    expect(system).toContain('Approval: ask: calls that need approval wait for the user');
    // The instructions, outer first, after the environment.
    const outer = system.indexOf('<instructions path="../AGENTS.md">\nUse pnpm, never npm.\n</instructions>');
    const inner = system.indexOf('<instructions path="AGENTS.md">\nTests live in test/.\n</instructions>');
    expect(outer).toBeGreaterThan(system.indexOf('</environment>'));
    expect(inner).toBeGreaterThan(outer);
    // The session lists them (session_opened, /status, stream-json).
    expect(runtime.instructions.files.map((file) => [file.path, file.bytes])).toEqual([
      ['../AGENTS.md', 21],
      ['AGENTS.md', 21],
    ]);
    expect(runtime.snapshot().instructions).toEqual([
      { path: '../AGENTS.md', bytes: 21 },
      { path: 'AGENTS.md', bytes: 21 },
    ]);
    // The system prompt is not stored: the session holds the conversation only.
    expect(runtime.session.history().some((message) => message.role === 'system')).toBe(false);
  });

  it('says the approval mode of the task\'s runtime (a remote agent\'s tasks are denied)', async () => {
    const workDir = await tempWorkspace('claw-prompt-');
    const { factory, provider } = scriptedFactory([{ text: 'a' }]);
    const runtime = await factory.createRuntime({ workDir, approval: 'deny' });
    await runtime.start('hi').wait();
    expect(systemOf(provider, 0)).toContain('Approval: deny: calls that need approval are refused');
    expect(systemOf(provider, 0)).toContain('Git: not a git repository\n');
  });

  it('replaces claw\'s text with the settings\' or the factory\'s system prompt, and appends', async () => {
    const workDir = await tempWorkspace('claw-prompt-');
    await writeFile(join(workDir, 'AGENTS.md'), 'rules\n');
    const fromSettings = scriptedFactory([{ text: 'a' }], {
      settings: settings({ systemPrompt: 'You are Bob.', appendSystemPrompt: 'Answer in French.' }),
    });
    await (await fromSettings.factory.createRuntime({ workDir })).start('hi').wait();
    const system = systemOf(fromSettings.provider, 0);
    expect(system).toMatch(/^You are Bob\.\n\n# Environment\n/);
    expect(system).not.toContain('You are claw');
    expect(system).toContain('<instructions path="AGENTS.md">');
    expect(system).toMatch(/\n\nAnswer in French\.$/);
    const fromFactory = scriptedFactory([{ text: 'a' }], {
      settings: settings({ systemPrompt: 'You are Bob.' }),
      systemPrompt: 'You are Alice.',
      appendSystemPrompt: 'Be brief.',
      instructions: false,
    });
    await (await fromFactory.factory.createRuntime({ workDir, sessionId: 'other' })).start('hi').wait();
    const other = systemOf(fromFactory.provider, 0);
    expect(other).toMatch(/^You are Alice\.\n\n# Environment\n/);
    expect(other).not.toContain('<instructions');
    expect(other).toMatch(/\n\nBe brief\.$/);
  });

  it('gives a subagent its own short prompt, with the same environment and instructions', async () => {
    const workDir = await tempWorkspace('claw-prompt-');
    await writeFile(join(workDir, 'AGENTS.md'), 'rules\n');
    const { factory, provider } = scriptedFactory([
      { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'find the tests' } }] },
      { text: 'they are in test/' },
      { text: 'done' },
    ]);
    await (await factory.createRuntime({ workDir })).start('hi').wait();
    const main = systemOf(provider, 0);
    const child = systemOf(provider, 1);
    expect(child).toMatch(/^You are a helper of claw/);
    expect(child).not.toContain('# How to work');
    expect(child).not.toContain('spawn_subagent');
    expect(main).toContain('- spawn_subagent:');
    const tail = (text: string) => text.slice(text.indexOf('# Environment'));
    expect(tail(child)).toBe(tail(main));
  });

  it('leaves bash out of the environment when bash is not offered (no isolation probe)', async () => {
    const workDir = await tempWorkspace('claw-prompt-');
    const { factory, provider } = scriptedFactory([{ text: 'a' }], {
      builtinTools: ['read_file'],
      // A probe would fail the test: none may start.
      spawner: new Promise(() => undefined),
    });
    await (await factory.createRuntime({ workDir })).start('hi').wait();
    const system = systemOf(provider, 0);
    expect(system).not.toContain('Bash:');
    expect(system).not.toContain('- bash:');
    expect(system).toContain('- read_file:');
  });
});

describe('findGitRepository', () => {
  it('finds the root above, a branch, a detached HEAD, and a worktree\'s .git file', async () => {
    const root = await tempWorkspace('claw-git-');
    expect(await findGitRepository(root)).toBeUndefined();
    await gitRepository(root, 'ref: refs/heads/main\n');
    await mkdir(join(root, 'a/b'), { recursive: true });
    expect(await findGitRepository(join(root, 'a/b'))).toEqual({ root, branch: 'main' });
    await writeFile(join(root, '.git/HEAD'), `${'ab12'.repeat(10)}\n`);
    expect(await findGitRepository(root)).toEqual({ root, detachedAt: 'ab12ab12ab12' });
    const worktree = join(root, 'a/wt');
    await mkdir(join(root, '.git/worktrees/wt'), { recursive: true });
    await writeFile(join(root, '.git/worktrees/wt/HEAD'), 'ref: refs/heads/other\n');
    await mkdir(worktree, { recursive: true });
    await writeFile(join(worktree, '.git'), 'gitdir: ../../.git/worktrees/wt\n');
    expect(await findGitRepository(worktree)).toEqual({ root: worktree, branch: 'other' });
  });

  it('gives the local date, not the UTC one', () => {
    expect(localDate(new Date(2031, 11, 31, 23, 30))).toBe('2031-12-31');
  });
});
