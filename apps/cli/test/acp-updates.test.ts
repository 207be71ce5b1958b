import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { describe, expect, it } from 'vitest';
import { promptText } from '../src/acp/agent.js';
import { titleOf } from '../src/acp/tool-views.js';
import { createAcpReporter, historyUpdates } from '../src/acp/updates.js';

describe('what an editor is told (ACP-2)', () => {
  it('replays a stored history: messages, thinking, each call with its result (a write with its diff)', () => {
    const updates = historyUpdates([
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: 'Writing.',
        reasoning: 'A new file is needed.',
        toolCalls: [{ id: 'c1', name: 'write_file', arguments: '{"path":"a.txt","content":"new\\n"}' }],
      },
      { role: 'tool', toolCallId: 'c1', content: 'created a.txt (4 bytes)' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'bash', arguments: '{"command":"make"}' }] },
      { role: 'tool', toolCallId: 'c2', content: 'tool call incomplete (previous run was interrupted)', isError: true },
    ], '/w');
    expect(updates.map((update) => update.sessionUpdate)).toEqual([
      'user_message_chunk', 'agent_thought_chunk', 'agent_message_chunk', 'tool_call', 'tool_call_update', 'tool_call', 'tool_call_update',
    ]);
    expect(updates[3]).toMatchObject({ kind: 'edit', title: 'Write a.txt', locations: [{ path: '/w/a.txt' }] });
    expect(updates[4]).toMatchObject({
      status: 'completed',
      content: [{ type: 'diff', path: '/w/a.txt', oldText: null, newText: 'new\n' }, { type: 'content' }],
    });
    expect(updates[6]).toMatchObject({ toolCallId: 'c2', status: 'failed' });
  });

  it('tells usage against the window, and a compaction with its summary', async () => {
    const sent: SessionUpdate[] = [];
    const reporter = createAcpReporter({
      send: async (update) => void sent.push(update),
      workDir: '/w',
      before: async () => null,
      contextWindowTokens: 128_000,
    });
    await reporter.onThinking?.({ turn: 3, purpose: 'summary' });
    await reporter.onCompacted?.({
      reason: 'threshold', upTo: 10, kept: [0], summary: 'the notes', pruned: [], tokensBefore: 100_000,
      tokensAfter: 20_000, prunedResults: 2, summarisedMessages: 9,
    });
    await reporter.onUsage?.({
      call: { promptTokens: 20_000, completionTokens: 50, totalTokens: 20_050 },
      callCostUsd: 0.01,
      run: { promptTokens: 20_000, completionTokens: 50, totalTokens: 20_050 },
      runCost: { usd: 0.01, unpricedCalls: 0 },
      session: { promptTokens: 20_000, completionTokens: 50, totalTokens: 20_050 },
      sessionCost: { usd: 0.25, unpricedCalls: 0 },
      budgetsLeft: {},
    });
    expect(sent).toEqual([
      { sessionUpdate: 'compaction_update', compactionId: 'compaction-1', status: 'in_progress' },
      { sessionUpdate: 'compaction_update', compactionId: 'compaction-1', status: 'completed', summary: [{ type: 'text', text: 'the notes' }] },
      { sessionUpdate: 'usage_update', used: 20_050, size: 128_000, cost: { amount: 0.25, currency: 'USD' } },
    ]);
  });

  it('titles calls as an editor lists them, and reads a prompt\'s content blocks', () => {
    expect(titleOf({ id: 'x', name: 'bash', arguments: '{"command":"npm test\\nnpm run lint"}' })).toBe('Run npm test …');
    expect(titleOf({ id: 'x', name: 'mcp_files_read', arguments: '{}' })).toBe('mcp_files_read');
    expect(promptText([{ type: 'text', text: 'a' }, { type: 'resource_link', uri: 'file:///w/b.ts', name: 'b.ts' }]))
      .toBe('a\n\n[b.ts: file:///w/b.ts]');
    expect(() => promptText([{ type: 'text', text: '  ' }])).toThrow('the prompt is empty');
  });
});
