// A run's own tools (`RunOptions.tools`, e.g. a workspace's MCP tools) read on every model call,
// and tool progress reaching the reporter.
import { defineTool, type ToolProgressReport } from '@claw/core';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, ToolRegistry, joinToolSources } from '../src/index.js';
import { newSession, recordTool } from './helpers.js';

function namedTool(name: string, answer: string) {
  return defineTool({
    name,
    description: `Answers ${answer}.`,
    risk: 'safe',
    schema: z.object({}),
    execute: async () => answer,
  });
}

describe('RunOptions.tools', () => {
  it('offers the run\'s tools next to the engine\'s, and sees one added during the run on the next call', async () => {
    const runTools = new ToolRegistry([namedTool('remote_a', 'from a')]);
    const seen: string[][] = [];
    const provider = new ScriptedProvider([
      (request) => {
        seen.push((request.tools ?? []).map((tool) => tool.name));
        return { toolCalls: [{ id: 'c1', name: 'remote_a', arguments: {} }] };
      },
      (request) => {
        seen.push((request.tools ?? []).map((tool) => tool.name));
        return { toolCalls: [{ id: 'c2', name: 'remote_b', arguments: {} }] };
      },
      { text: 'done' },
    ]);
    // remote_b appears while the run is under way (as after tools/list_changed).
    const addLater = {
      onToolResult: () => {
        if (runTools.get('remote_b') === undefined) runTools.register(namedTool('remote_b', 'from b'));
      },
    };
    const engine = new Engine({ provider, tools: [recordTool([])], subagents: true, gate: new AllowAllGate() });
    const session = newSession();
    const result = await engine.run('go', { session, tools: runTools, reporter: addLater });
    expect(result.status).toBe('completed');
    expect(seen).toEqual([
      ['record', 'remote_a', 'spawn_subagent'],
      ['record', 'remote_a', 'remote_b', 'spawn_subagent'],
    ]);
    const contents = session.history().filter((message) => message.role === 'tool').map((message) => message.content);
    expect(contents).toEqual(['from a', 'from b']);
    // The engine's own registry is left as it was.
    expect(engine.tools.names()).toEqual(['record']);
  });

  it('an engine tool of the same name wins over the run\'s', async () => {
    const joined = joinToolSources(
      new ToolRegistry([namedTool('same', 'engine')]),
      new ToolRegistry([namedTool('same', 'run'), namedTool('other', 'run')]),
    );
    expect(joined.names()).toEqual(['same', 'other']);
    expect(joined.definitions().map((definition) => definition.description)).toEqual(['Answers engine.', 'Answers run.']);
    expect(await joined.get('same')?.execute({}, { signal: new AbortController().signal, workDir: '/' })).toBe('engine');
  });
});

describe('tool progress', () => {
  it('reaches the reporter with the call it belongs to; a failing progress callback does not stop the run', async () => {
    const progressTool = defineTool({
      name: 'long',
      description: 'Takes a while.',
      risk: 'safe',
      schema: z.object({}),
      execute: async (_args, context) => {
        context.onProgress?.({ progress: 1, total: 2 });
        context.onProgress?.({ progress: 2, total: 2, message: 'done' });
        return 'finished';
      },
    });
    const provider = new ScriptedProvider([
      { toolCalls: [{ id: 'p1', name: 'long', arguments: {} }] },
      { text: 'ok' },
    ]);
    const engine = new Engine({ provider, tools: [progressTool], gate: new AllowAllGate() });
    const reports: ToolProgressReport[] = [];
    const result = await engine.run('go', {
      session: newSession(),
      reporter: {
        onToolProgress: (report) => {
          reports.push(report);
          throw new Error('the terminal is gone');
        },
      },
    });
    expect(result.status).toBe('completed');
    expect(reports).toEqual([
      { toolCallId: 'p1', toolName: 'long', progress: 1, total: 2 },
      { toolCallId: 'p1', toolName: 'long', progress: 2, total: 2, message: 'done' },
    ]);
  });
});
