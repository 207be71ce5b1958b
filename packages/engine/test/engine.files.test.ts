import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defineTool, type ApprovalGate, type ToolContext } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, MemoryTextFiles, ScriptedProvider } from '@claw/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, builtinTools } from '../src/index.js';
import { createTempWorkspace, type TempWorkspace } from './tools/workspace.js';

// ACP-4: a run's `files` (an editor's file system) reaches every tool call of the run, its
// subagents' included, behind the approval gate.

describe('RunOptions.files', () => {
  let ws: TempWorkspace;
  let files: MemoryTextFiles;
  beforeEach(async () => {
    ws = await createTempWorkspace();
    await writeFile(join(ws.workDir, 'notes.md'), 'saved on disk\n');
    files = new MemoryTextFiles({ files: { [join(ws.workDir, 'notes.md')]: 'unsaved in the editor\n' } });
  });
  afterEach(async () => {
    await ws.remove();
  });

  const toolResults = (session: MemorySession): string[] =>
    session.history().flatMap((message) => (message.role === 'tool' ? [message.content] : []));

  it('reaches the run\'s tool calls and its subagents\' (the model sees the unsaved text)', async () => {
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: 'notes.md' } }] },
      { toolCalls: [{ id: 's1', name: 'spawn_subagent', arguments: { task: 'read notes.md' } }] },
      // The subagent's two model calls.
      { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.md' } }] },
      (request) => ({ text: `child saw: ${request.messages.at(-1)?.content ?? ''}` }),
      { toolCalls: [{ id: 'w1', name: 'write_file', arguments: { path: 'out.txt', content: 'done' } }] },
      { text: 'finished' },
    ]);
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: builtinTools(), subagents: true });
    const session = new MemorySession({ workDir: ws.workDir });
    const result = await engine.run('go', { session, files });
    expect(result.status).toBe('completed');
    expect(toolResults(session)).toEqual([
      'unsaved in the editor',
      'child saw: unsaved in the editor',
      'wrote 4 bytes to out.txt (created)',
    ]);
    expect(files.callLog()).toEqual([
      `readTextFile ${join(ws.workDir, 'notes.md')}`,
      `readTextFile ${join(ws.workDir, 'notes.md')}`,
      `writeTextFile ${join(ws.workDir, 'out.txt')}`,
    ]);
    expect(existsSync(join(ws.workDir, 'out.txt'))).toBe(false);
  });

  it('reaches a subagent run on its own, and only runs that are given it', async () => {
    const script = () => [
      { toolCalls: [{ id: 'c1', name: 'read_file', arguments: { path: 'notes.md' } }] },
      { text: 'ok' },
    ];
    const withFiles = new ScriptedProvider(script());
    await new Engine({ provider: withFiles, gate: new AllowAllGate(), tools: builtinTools() })
      .runSubagent('read', { workDir: ws.workDir, files });
    expect(withFiles.calls[1]?.request.messages.at(-1)?.content).toBe('unsaved in the editor');

    const without = new ScriptedProvider(script());
    const session = new MemorySession({ workDir: ws.workDir });
    await new Engine({ provider: without, gate: new AllowAllGate(), tools: builtinTools() }).run('read', { session });
    expect(toolResults(session)).toEqual(['saved on disk']);
    expect(files.calls).toHaveLength(1);
  });

  it('hands it to any tool as ToolContext.files', async () => {
    const seen: Array<ToolContext['files']> = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Looks at its context.',
      risk: 'safe',
      schema: z.object({}),
      execute: async (_args, context) => {
        seen.push(context.files);
        return 'ok';
      },
    });
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'p1', name: 'probe', arguments: {} }] },
      { text: 'done' },
    ]);
    await new Engine({ provider, gate: new AllowAllGate(), tools: [probe] })
      .run('go', { session: new MemorySession({ workDir: ws.workDir }), files });
    expect(seen).toEqual([files]);
  });

  it('does not get around the approval gate: a denied write never reaches the editor', async () => {
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'w1', name: 'write_file', arguments: { path: 'notes.md', content: 'pwned' } },
          { id: 'r1', name: 'read_file', arguments: { path: 'notes.md' } },
        ],
      },
      { text: 'gave up' },
    ]);
    const asked: string[] = [];
    const gate: ApprovalGate = {
      check: async (request) => {
        asked.push(request.toolCall.name);
        return request.toolCall.name === 'read_file' ? { allowed: true } : { allowed: false, reason: 'not now' };
      },
    };
    const session = new MemorySession({ workDir: ws.workDir });
    const result = await new Engine({ provider, gate, tools: builtinTools() }).run('go', { session, files });
    expect(result.status).toBe('completed');
    expect(asked.sort()).toEqual(['read_file', 'write_file']);
    const [denied, read] = toolResults(session);
    expect(denied).toContain('permission denied: not now');
    expect(read).toBe('unsaved in the editor');
    expect(files.callLog()).toEqual([`readTextFile ${join(ws.workDir, 'notes.md')}`]);
    expect(files.files.get(join(ws.workDir, 'notes.md'))).toBe('unsaved in the editor\n');
    expect(await readFile(join(ws.workDir, 'notes.md'), 'utf8')).toBe('saved on disk\n');
  });
});
