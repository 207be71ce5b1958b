import { AllowAllGate, RecordingReporter, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import {
  Engine,
  buildSystemPrompt,
  builtinTools,
  type SessionEnvironment,
} from '../src/index.js';
import { newSession, recordTool } from './helpers.js';

const environment: SessionEnvironment = {
  workspaceRoot: '/srv/project',
  platform: 'Linux 6.1.0 (Debian GNU/Linux 12 (bookworm)), x64',
  shell: 'bash',
  date: '2031-05-06',
  git: { root: '/srv/project', branch: 'main' },
  bash: { isolated: true, network: false },
  approval: 'ask',
};

function systemOf(provider: ScriptedProvider, call: number): string | undefined {
  const first = provider.calls[call]?.request.messages[0];
  return first?.role === 'system' ? first.content : undefined;
}

describe('the system prompt (REAL-1)', () => {
  it('is claw\'s own by default: who it is, how to work, the offered built-in tools, denials', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'record', arguments: { text: 'a' } }] },
      { text: 'done' },
    ]);
    const session = newSession();
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [...builtinTools(), recordTool([])] });
    await engine.run('hi', { session });
    const system = systemOf(provider, 0) ?? '';
    expect(system).toMatch(/^You are claw, a coding agent\./);
    expect(system).toContain('# How to work');
    for (const tool of ['read_file', 'write_file', 'edit_file', 'bash']) expect(system).toContain(`- ${tool}:`);
    // Subagents are off by default: not offered, not explained.
    expect(system).not.toContain('spawn_subagent');
    // A tool claw does not know explains itself.
    expect(system).toContain('Other tools (from MCP servers or other agents) explain themselves');
    expect(system).toContain('Do not repeat a denied call');
    // No environment was given: no block. The same text on the next turn; never stored.
    expect(system).not.toContain('<environment>');
    expect(systemOf(provider, 1)).toBe(system);
    expect(session.history().map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('explains only the built-in tools it offers', async () => {
    const provider = new ScriptedProvider([{ text: 'done' }]);
    await new Engine({ provider, gate: new AllowAllGate(), tools: builtinTools().slice(0, 1) })
      .run('hi', { session: newSession() });
    const system = systemOf(provider, 0) ?? '';
    expect(system).toContain('- read_file:');
    expect(system).not.toContain('- bash:');
    expect(system).not.toContain('- edit_file:');
    expect(system).not.toContain('Other tools');
  });

  it('adds the environment block and the instructions, a run\'s own over the engine\'s', async () => {
    const provider = new ScriptedProvider([{ text: 'a' }, { text: 'b' }]);
    const engine = new Engine({
      provider,
      gate: new AllowAllGate(),
      environment,
      instructions: [{ path: 'AGENTS.md', text: 'Use pnpm.' }],
    });
    await engine.run('one', { session: newSession() });
    const first = systemOf(provider, 0) ?? '';
    expect(first).toContain([
      '# Environment',
      '<environment>',
      'Workspace root: /srv/project',
      'Platform: Linux 6.1.0 (Debian GNU/Linux 12 (bookworm)), x64',
      'Shell: bash',
      'Date: 2031-05-06',
      'Git: a git repository (root /srv/project), on branch main',
      'Bash: isolated (bubblewrap): only the workspace is writable, the rest of the system is read-only or hidden, there is no network',
      'Approval: ask: calls that need approval wait for the user to allow or deny them',
      '</environment>',
    ].join('\n'));
    expect(first).toContain('# Project instructions');
    expect(first).toContain('<instructions path="AGENTS.md">\nUse pnpm.\n</instructions>');
    expect(first.indexOf('<instructions')).toBeGreaterThan(first.indexOf('</environment>'));
    await engine.run('two', {
      session: newSession(),
      environment: { ...environment, git: undefined, approval: 'deny' },
      instructions: [],
    });
    const second = systemOf(provider, 1) ?? '';
    expect(second).toContain('Git: not a git repository');
    expect(second).toContain('Approval: deny:');
    expect(second).not.toContain('# Project instructions');
  });

  it('takes a replacement and an addition; an empty prompt with nothing else sends none', async () => {
    const provider = new ScriptedProvider([{ text: 'a' }, { text: 'b' }]);
    await new Engine({
      provider,
      gate: new AllowAllGate(),
      systemPrompt: 'You are Bob.',
      appendSystemPrompt: 'Answer in French.',
      environment,
    }).run('one', { session: newSession() });
    expect(systemOf(provider, 0)).toMatch(/^You are Bob\.\n\n# Environment\n[^]*\n\nAnswer in French\.$/);
    await new Engine({ provider, gate: new AllowAllGate(), systemPrompt: '' }).run('two', { session: newSession() });
    expect(provider.calls[1]?.request.messages.map((message) => message.role)).toEqual(['user']);
  });

  it('gives subagents a short prompt of their own, with the same environment and additions', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ name: 'spawn_subagent', arguments: { task: 'look' } }] },
      { text: 'found it' },
      { text: 'done' },
    ]);
    await new Engine({
      provider,
      gate: new AllowAllGate(),
      subagents: true,
      tools: builtinTools(),
      environment,
      appendSystemPrompt: 'Be brief.',
    }).run('hi', { session: newSession(), reporter: new RecordingReporter() });
    const main = systemOf(provider, 0) ?? '';
    const child = systemOf(provider, 1) ?? '';
    expect(main).toContain('- spawn_subagent:');
    expect(child).toMatch(/^You are a helper of claw, a coding agent/);
    expect(child).toContain('do not ask any');
    expect(child).not.toContain('spawn_subagent');
    expect(child).toContain('- read_file:');
    expect(child).toContain('Date: 2031-05-06');
    expect(child).toMatch(/\n\nBe brief\.$/);
  });

  it('is the same text for the same parts, and says where instructions were cut', () => {
    const parts = {
      tools: ['read_file', 'bash'],
      environment,
      instructions: [{ path: 'AGENTS.md', text: 'rules\n', truncated: true }],
    };
    expect(buildSystemPrompt(parts)).toBe(buildSystemPrompt({ ...parts }));
    expect(buildSystemPrompt(parts)).toContain(
      '<instructions path="AGENTS.md">\nrules\n[the rest of this file was left out: project instructions are limited to 32 KiB in all]\n</instructions>',
    );
    expect(buildSystemPrompt({ ...parts, environment: { ...environment, bash: { isolated: false, network: true } } }))
      .toContain("Bash: not isolated: commands run as the user, with the network, so each one needs the user's approval");
  });
});

describe('reasoning (REAL-4)', () => {
  it('reports the thinking apart from the answer, stores it with the reply, and keeps it out of the answer', async () => {
    const provider = new ScriptedProvider([
      { reasoning: ['Let me ', 'think.'], textChunks: ['The ', 'answer.'] },
      { text: 'again' },
    ]);
    const reporter = new RecordingReporter();
    const session = newSession();
    const engine = new Engine({ provider, gate: new AllowAllGate() });
    const result = await engine.run('q', { session, reporter });
    expect(result.finalText).toBe('The answer.');
    expect(reporter.types.filter((type) => type.endsWith('_delta'))).toEqual([
      'thinking_delta', 'thinking_delta', 'text_delta', 'text_delta',
    ]);
    expect(reporter.events.flatMap((event) => (event.type === 'thinking_delta' ? [event.delta] : []))).toEqual(['Let me ', 'think.']);
    expect(session.history()[1]).toEqual({ role: 'assistant', content: 'The answer.', reasoning: 'Let me think.' });
    // The stored reply goes to the provider with its reasoning; the provider leaves it out of the
    // wire request (see @claw/provider's convert tests).
    await engine.run('q2', { session, reporter: new RecordingReporter() });
    expect(provider.calls[1]?.request.messages.find((message) => message.role === 'assistant'))
      .toMatchObject({ content: 'The answer.' });
  });

  it('a provider that cannot stream tells its reasoning in one piece; a reporter that fails on it stops the run', async () => {
    const provider = new ScriptedProvider([{ reasoning: ['a', 'b'], text: 'plain' }], { streaming: false });
    const reporter = new RecordingReporter();
    await new Engine({ provider, gate: new AllowAllGate() }).run('q', { session: newSession(), reporter });
    expect(reporter.events.filter((event) => event.type === 'thinking_delta')).toEqual([{ type: 'thinking_delta', delta: 'ab' }]);
    const failing = new RecordingReporter({ failOn: { type: 'thinking_delta' } });
    const stopped = await new Engine({ provider: new ScriptedProvider([{ reasoning: ['x'], text: 'y' }]), gate: new AllowAllGate() })
      .run('q', { session: newSession(), reporter: failing });
    expect(stopped.status).toBe('failed');
    expect(stopped.error?.code).toBe('reporter_failed');
  });
});
