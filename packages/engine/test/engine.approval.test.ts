import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DefaultPolicy,
  FileGrantStore,
  Gate,
  MemoryAuditLog,
  PendingApprovals,
  type ApprovalPrompt,
} from '@claw/approval';
import { MemorySession } from '@claw/session-store';
import { ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine, builtinTools } from '../src/index.js';
import { expectPaired } from './helpers.js';
import { createTempWorkspace, type TempWorkspace } from './tools/workspace.js';

/** The engine with the real gate (APR-*) in place of the test gates: ENG-3 end to end. */
describe('Engine with the approval gate', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await createTempWorkspace();
  });
  afterEach(async () => {
    await ws.remove();
  });

  function setup(answers: Array<'allow_once' | 'allow_session' | 'deny'>) {
    const asked: ApprovalPrompt[] = [];
    const approvals: PendingApprovals = new PendingApprovals({
      onRequest: (prompt) => {
        asked.push(prompt);
        const answer = answers.shift() ?? 'deny';
        // Answered from "the terminal" a moment later, as a user would.
        setTimeout(() => approvals.respond(prompt.requestId, answer), 1);
      },
    });
    const audit = new MemoryAuditLog();
    const gate = new Gate({
      policy: new DefaultPolicy({ bashIsolated: false }),
      handler: approvals,
      grants: new FileGrantStore({ workDir: ws.workDir }),
      audit,
    });
    return { asked, audit, gate, approvals };
  }

  const write = (content: string) => ({ name: 'write_file', arguments: { path: 'notes.txt', content } });

  it('asks for a mutating call, reuses a session grant for the identical call, asks again for another', async () => {
    const { asked, audit, gate } = setup(['allow_session', 'deny']);
    const provider = new ScriptedProvider([
      { toolCalls: [write('one')] },
      { toolCalls: [write('one')] },
      { toolCalls: [write('two')] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
      { text: 'done' },
    ]);
    const session = new MemorySession({ id: 's1', workDir: ws.workDir });
    const result = await new Engine({ provider, gate, tools: builtinTools() }).run('write notes', { session });
    expect(result.status).toBe('completed');
    // Asked twice: the first write (granted for the session), the different second content (denied).
    expect(asked.map((prompt) => [prompt.toolName, prompt.reason])).toEqual([
      ['write_file', 'write_file will write notes.txt'],
      ['write_file', 'write_file will write notes.txt'],
    ]);
    const observations = session.history().filter((message) => message.role === 'tool');
    expect(observations.map((message) => message.isError === true)).toEqual([false, false, true, false]);
    expect(observations[2]?.content).toMatch(/^Error: permission denied: /);
    expect(await readFile(join(ws.workDir, 'notes.txt'), 'utf8')).toBe('one');
    expect(audit.entries.map((entry) => entry.decision)).toEqual(['allow_session', 'grant_reuse', 'deny', 'policy_allow']);
    // The grant is on disk for the next process.
    const grants = JSON.parse(await readFile(join(ws.workDir, '.claw/grants.json'), 'utf8')) as { grants: unknown[] };
    expect(grants.grants).toHaveLength(1);
    expectPaired(session.history());
  });

  it('never asks about rm -rf / or a path outside the workspace: denied by policy, nothing runs', async () => {
    const { asked, gate } = setup([]);
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'rm -rf /' } },
          { name: 'write_file', arguments: { path: '../outside/x', content: 'x' } },
          { name: 'write_file', arguments: { path: '.claw/grants.json', content: '{}' } },
        ],
      },
      { text: 'ok' },
    ]);
    const session = new MemorySession({ workDir: ws.workDir });
    await new Engine({ provider, gate, tools: builtinTools() }).run('destroy', { session });
    expect(asked).toEqual([]);
    const observations = session.history().filter((message) => message.role === 'tool');
    expect(observations.every((message) => message.content.startsWith('Error: permission denied: '))).toBe(true);
  });

  it('canceling the run while an approval is pending leaves nothing pending', async () => {
    const controller = new AbortController();
    const approvals = new PendingApprovals({ onRequest: () => controller.abort() });
    const gate = new Gate({ handler: approvals, grants: new FileGrantStore({ workDir: ws.workDir }) });
    const provider = new ScriptedProvider([{ toolCalls: [write('x')] }]);
    const session = new MemorySession({ workDir: ws.workDir });
    const result = await new Engine({ provider, gate, tools: builtinTools() }).run('write', { session, signal: controller.signal });
    expect(result.status).toBe('canceled');
    expect(approvals.pending()).toEqual([]);
    expectPaired(session.history());
  });
});
