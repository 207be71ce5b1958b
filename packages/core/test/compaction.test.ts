import { describe, expect, it } from 'vitest';
import { compactedView, type Compaction, type Message } from '../src/index.js';

// compactedView (CMP-2): what the model is sent of a compacted history. A long session sends it
// with every request, so a pruned result's stub is made once and reused.

const history: Message[] = [
  { role: 'user', content: 'Fix the parser.' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [
      { id: 'a', name: 'read_file', arguments: '{"path":"src/parse.ts"}' },
      { id: 'b', name: 'bash', arguments: '{"command":"npm test"}' },
    ],
  },
  { role: 'tool', toolCallId: 'a', content: 'x'.repeat(2048) },
  { role: 'tool', toolCallId: 'b', content: 'ok' },
];

const compaction = (pruned: string[]): Compaction => ({
  reason: 'threshold',
  upTo: 0,
  kept: [],
  pruned,
  tokensBefore: 600,
  tokensAfter: 100,
  prunedResults: pruned.length,
  summarisedMessages: 0,
});

describe('compactedView', () => {
  it('stubs the pruned results and leaves the rest as they are', () => {
    const view = compactedView(history, compaction(['a']));
    expect(view.map((message) => message.content)).toEqual([
      'Fix the parser.',
      '',
      '[output of read_file "src/parse.ts" (2.0 KB) removed to save context; run it again if needed]',
      'ok',
    ]);
    expect(view[3]).toBe(history[3]);
    expect(history[2]?.content).toHaveLength(2048);
  });

  it('gives the same stub object on every request, and a fresh one when its call differs', () => {
    const pruneBoth = compaction(['a', 'b']);
    const first = compactedView(history, pruneBoth);
    const again = compactedView(history, compaction(['a', 'b']));
    expect(again[2]).toBe(first[2]);
    expect(again[3]).toBe(first[3]);
    expect(again[3]?.content).toBe(
      '[output of bash "npm test" (2 B) removed to save context; run it again if needed]',
    );
    // The same result after another call (a repaired history): its own description.
    const other: Message[] = [
      history[0] as Message,
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'b', name: 'bash', arguments: '{"command":"make"}' }],
      },
      history[3] as Message,
    ];
    expect(compactedView(other, pruneBoth)[2]?.content).toBe(
      '[output of bash "make" (2 B) removed to save context; run it again if needed]',
    );
    // A compaction that prunes less leaves that result whole.
    expect(compactedView(history, compaction(['a']))[3]).toBe(history[3]);
  });
});
