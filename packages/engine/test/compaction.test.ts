import { ClawError, compactedView, type Compaction, type Message, type ModelRequest } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { ContextExhaustedError, Engine, contextWindowOf, type EngineOptions } from '../src/index.js';
import { newSession, recordTool } from './helpers.js';

// Compaction (CMP-1 … CMP-3, CMP-6) through the real loop, on a scripted model. Sizes are the
// engine's estimate (about four characters a token); the windows are small so that a few
// messages fill them.

const task = 'Fix the failing parser test in src/parse.ts.';

/** A step of an earlier task: a read whose result is `size` characters. */
function readStep(index: number, size: number): Message[] {
  return [
    { role: 'assistant', content: '', toolCalls: [{ id: `r${index}`, name: 'read_file', arguments: JSON.stringify({ path: `f${index}.ts` }) }] },
    { role: 'tool', toolCallId: `r${index}`, content: `${index}:`.padEnd(size, 'x') },
  ];
}

function history(steps: number, size: number): Message[] {
  return [{ role: 'user', content: task }, ...Array.from({ length: steps }, (_, index) => readStep(index, size)).flat()];
}

function engine(provider: ScriptedProvider, options: Partial<EngineOptions> = {}): Engine {
  return new Engine({
    provider,
    gate: new AllowAllGate(),
    tools: [recordTool([])],
    systemPrompt: '',
    contextWindowTokens: 4_000,
    ...options,
  });
}

function isSummaryCall(request: ModelRequest): boolean {
  return request.tools === undefined && request.messages[0]?.content.startsWith('You write hand-off notes') === true;
}

function contents(request: ModelRequest | undefined): string[] {
  return (request?.messages ?? []).map((message) => message.content);
}

describe('compaction (CMP-1, CMP-2)', () => {
  it('prunes old tool results first: no summary call when that is enough; the stub names the call and its size', async () => {
    // 14 results of 1,000 characters (~250 tokens each): 3,600 tokens, over 80 % of 4,000.
    const session = newSession(history(14, 1_000));
    const compactions: Compaction[] = [];
    const provider = new ScriptedProvider([{ text: 'done' }]);
    const result = await engine(provider).run('go on', { session, reporter: { onCompacted: (done) => void compactions.push(done) } });
    expect(result.status).toBe('completed');
    expect(provider.calls).toHaveLength(1);
    expect(compactions).toHaveLength(1);
    const [done] = compactions;
    expect(done).toMatchObject({ reason: 'threshold', upTo: 0, summarisedMessages: 0 });
    expect(done?.prunedResults).toBeGreaterThan(0);
    expect(done?.tokensAfter).toBeLessThan(3_200);
    expect(done?.tokensBefore).toBeGreaterThan(3_200);
    expect(session.compaction()).toBe(done);
    const sent = contents(provider.calls[0]?.request);
    expect(sent[0]).toBe(task);
    expect(sent).toContain('[output of read_file "f0.ts" (1000 B) removed to save context; run it again if needed]');
    // The most recent results are whole; the full history is kept.
    expect(sent).toContain('13:'.padEnd(1_000, 'x'));
    expect(session.history()[2]).toMatchObject({ content: '0:'.padEnd(1_000, 'x') });
    expect(result).toMatchObject({ compactions: 1, summaryCalls: 0 });
  });

  it('summarises when pruning is not enough: one tool-less call with claw\'s prompt; then the task verbatim, the summary and the latest steps', async () => {
    // Assistant text cannot be pruned: 30 steps of 500 characters of reasoning.
    const old: Message[] = [{ role: 'user', content: task }];
    for (let index = 0; index < 30; index += 1) {
      old.push({ role: 'assistant', content: `step ${index}: `.padEnd(500, 'y'), toolCalls: [{ id: `c${index}`, name: 'record', arguments: '{"text":"a"}' }] });
      old.push({ role: 'tool', toolCallId: `c${index}`, content: 'ok' });
    }
    old.push({ role: 'assistant', content: 'Half way.' }, { role: 'user', content: 'Also keep the old API.' });
    const session = newSession(old);
    const provider = new ScriptedProvider([
      { text: 'Goal: fix the parser test.\nRemaining: run the tests.', usage: { promptTokens: 3_000, completionTokens: 40 } },
      { text: 'done', usage: { promptTokens: 900, completionTokens: 2 } },
    ]);
    const result = await engine(provider, { prices: { scripted: { inputPerMillion: 1, outputPerMillion: 2 } } })
      .run('and finish it', { session });
    expect(result.status).toBe('completed');
    expect(provider.calls).toHaveLength(2);
    const summary = provider.calls[0]?.request;
    expect(summary && isSummaryCall(summary)).toBe(true);
    // The part being replaced, newest first when it must be cut to fit the summary call.
    expect(summary?.messages[1]?.content).toMatch(/^<user-messages-kept-verbatim>|^<transcript>/);
    expect(summary?.messages[1]?.content).toContain('[assistant] step 1');
    expect(summary?.messages[1]?.content).toContain('[earlier messages left out');
    const sent = provider.calls[1]?.request.messages ?? [];
    // Every user message of the conversation, verbatim and in order, then the summary.
    const summaryAt = sent.findIndex((message) => message.content.includes('<summary>\nGoal: fix the parser test.'));
    expect(summaryAt).toBeGreaterThan(0);
    expect(sent.slice(0, summaryAt).map((message) => message.content)).toEqual([task]);
    // The later user message is among the latest steps, after the summary.
    expect(sent.slice(summaryAt).map((message) => message.content)).toContain('Also keep the old API.');
    // The latest steps follow whole, never starting with an orphan result; the prompt is last.
    expect(sent[summaryAt + 1]?.role).not.toBe('tool');
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'and finish it' });
    const compaction = session.compaction();
    expect(compaction?.summary).toBe('Goal: fix the parser test.\nRemaining: run the tests.');
    expect(compaction?.summarisedMessages).toBeGreaterThan(30);
    expect(compaction?.kept).toEqual([0]);
    // The summary call counts (CMP-6): tokens and cost of both calls.
    expect(result.usage).toMatchObject({ promptTokens: 3_900, completionTokens: 42 });
    expect(result.cost.usd).toBeCloseTo((3_900 * 1 + 42 * 2) / 1_000_000, 12);
    expect(result).toMatchObject({ turns: 1, compactions: 1, summaryCalls: 1 });
  });

  it('never loops: the next turn does not compact again until the conversation grew by a tenth of the window', async () => {
    const old: Message[] = [{ role: 'user', content: task }];
    for (let index = 0; index < 30; index += 1) {
      old.push({ role: 'assistant', content: `step ${index}: `.padEnd(500, 'y'), toolCalls: [{ id: `c${index}`, name: 'record', arguments: '{"text":"a"}' }] });
      old.push({ role: 'tool', toolCallId: `c${index}`, content: 'ok' });
    }
    const provider = new ScriptedProvider([
      { text: 'the summary' },
      ...Array.from({ length: 4 }, (_, index) => ({ toolCalls: [{ name: 'record', arguments: { text: `t${index}` } }] })),
      { text: 'done' },
    ]);
    const result = await engine(provider).run('go', { session: newSession(old) });
    expect(result.status).toBe('completed');
    expect(provider.calls.filter((call) => isSummaryCall(call.request))).toHaveLength(1);
    expect(result).toMatchObject({ turns: 5, compactions: 1, summaryCalls: 1 });
  });

  it('counts the size from the server\'s own count of the last request: a model that counts more compacts sooner', async () => {
    const session = newSession(history(6, 1_000));
    const provider = new ScriptedProvider([
      // The server counted 3,500 tokens where claw estimates ~1,600.
      { toolCalls: [{ name: 'record', arguments: { text: 'x' } }], usage: { promptTokens: 3_500, completionTokens: 5 } },
      { text: 'done' },
    ]);
    const compactions: Compaction[] = [];
    await engine(provider).run('go', { session, reporter: { onCompacted: (done) => void compactions.push(done) } });
    expect(compactions).toHaveLength(1);
    expect(compactions[0]?.tokensBefore).toBeLessThan(3_200);
  });

  it('a session that cannot store a compaction is compacted for the run', async () => {
    const plain = newSession(history(14, 1_000));
    const session = {
      id: plain.id,
      workDir: plain.workDir,
      history: () => plain.history(),
      append: (...messages: Message[]) => plain.append(...messages),
      recordUsage: plain.recordUsage.bind(plain),
      usage: () => plain.usage(),
      cost: () => plain.cost(),
    };
    const provider = new ScriptedProvider([{ toolCalls: [{ name: 'record', arguments: { text: 'x' } }] }, { text: 'done' }]);
    await engine(provider).run('go', { session });
    for (const call of provider.calls) expect(contents(call.request).join('\n')).toContain('removed to save context');
  });

  it('keeps every user message verbatim while they fit a quarter of the window, else the first and the latest', async () => {
    const old: Message[] = [];
    for (let index = 0; index < 20; index += 1) {
      old.push({ role: 'user', content: `request ${index}: `.padEnd(400, 'r') }, { role: 'assistant', content: `answer ${index}`.padEnd(400, 'a') });
    }
    const session = newSession(old);
    const provider = new ScriptedProvider([{ text: 'summary' }]);
    const result = await engine(provider).compact({ session });
    expect(result.status).toBe('completed');
    // 20 requests of ~100 tokens, a budget of 1,000: the first, then the latest 8 before the tail.
    const kept = result.compaction?.kept ?? [];
    expect(kept[0]).toBe(0);
    expect(kept.length).toBeGreaterThan(5);
    expect(kept.length).toBeLessThan(11);
    const latest = kept.slice(1);
    expect(latest).toEqual(latest.map((_, index) => latest[0] as number + index * 2));
    // The last step (the latest answer) stays; the request before it is the latest kept.
    expect(latest.at(-1)).toBe((result.compaction?.upTo ?? 0) - 1);
  });

  it('takes a well-known model\'s window from the table, any other model 128k unless told', () => {
    expect(contextWindowOf('gpt-4o-2024-08-06')).toBe(128_000);
    expect(contextWindowOf('gpt-4.1-mini')).toBe(1_047_576);
    expect(contextWindowOf('openai/gpt-5')).toBe(400_000);
    expect(contextWindowOf('qwen2.5-coder:32b')).toBe(32_768);
    expect(contextWindowOf('gpt-4o-mini-2024-07-18')).toBe(128_000);
    expect(contextWindowOf('my-own-model')).toBeUndefined();
  });
});

describe('overflow, exhaustion and a failed summary (CMP-1, CMP-3)', () => {
  const overflow = () => new ClawError('the conversation no longer fits the model\'s context', { code: 'context_length_exceeded' });

  it('an overflow the server reports: compacted at once, the call tried once more, and the task completes', async () => {
    const session = newSession(history(8, 1_000));
    const provider = new ScriptedProvider([
      { error: overflow() },
      { text: 'summary of the reads' },
      { text: 'done' },
    ]);
    const result = await engine(provider).run('go', { session });
    expect(result.status).toBe('completed');
    expect(provider.calls).toHaveLength(3);
    expect(isSummaryCall(provider.calls[1]?.request as ModelRequest)).toBe(true);
    expect(session.compaction()).toMatchObject({ reason: 'overflow', summary: 'summary of the reads' });
    expect(contents(provider.calls[2]?.request)[0]).toBe(task);
  });

  it('a second overflow after the compaction ends the task with context_exhausted, never a second compaction', async () => {
    const provider = new ScriptedProvider([{ error: overflow() }, { text: 'summary' }, { error: overflow() }]);
    const result = await engine(provider).run('go', { session: newSession(history(8, 1_000)) });
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ContextExhaustedError);
    expect(result.error?.code).toBe('context_exhausted');
    expect(provider.calls).toHaveLength(3);
  });

  it('a request that cannot fit fails with the sizes and what to do, after exactly one summary call', async () => {
    const huge = 'z'.repeat(20_000); // ~5,000 tokens in one user message: never cut
    const steps = Array.from({ length: 6 }, (_, index) => ({ role: 'assistant' as const, content: `thought ${index} `.padEnd(1_000, 't') }));
    const session = newSession([{ role: 'user', content: huge }, ...steps, { role: 'assistant', content: 'ok' }]);
    const provider = new ScriptedProvider([{ text: 'summary' }]);
    const result = await engine(provider).run('go', { session });
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('context_exhausted');
    expect(result.error?.message).toMatch(/the next request is about [5-6],\d{3} tokens, and at most 3,600 of the model's 4,000 can be sent/);
    expect(result.error?.message).toContain('--context-window-tokens');
    expect(provider.calls.filter((call) => isSummaryCall(call.request))).toHaveLength(1);
  });

  it('a summary call that fails: the older messages are left out (the user\'s kept), the failure is told, the task goes on', async () => {
    const old: Message[] = [{ role: 'user', content: task }];
    for (let index = 0; index < 30; index += 1) {
      old.push({ role: 'assistant', content: `step ${index}: `.padEnd(500, 'y') });
      old.push({ role: 'user', content: `more ${index}` });
    }
    const session = newSession(old);
    const compactions: Compaction[] = [];
    const provider = new ScriptedProvider([
      { error: new ClawError('model API returned HTTP 500', { code: 'http_error' }) },
      { text: 'done' },
    ]);
    const result = await engine(provider).run('go', { session, reporter: { onCompacted: (done) => void compactions.push(done) } });
    expect(result.status).toBe('completed');
    expect(compactions[0]).toMatchObject({ reason: 'threshold', summaryError: 'model API returned HTTP 500' });
    expect(compactions[0]?.summary).toBeUndefined();
    const sent = provider.calls[1]?.request.messages ?? [];
    expect(sent[0]?.content).toBe(task);
    expect(sent.some((message) => message.content.includes('could not be summarised'))).toBe(true);
    // The user's messages are all kept, even those of the part left out.
    expect(sent.filter((message) => message.content.startsWith('more ')).length).toBe(30);
  });

  it('canceling during the summary call cancels the task; nothing is stored', async () => {
    const controller = new AbortController();
    const session = newSession(history(14, 1_000).concat(Array.from({ length: 10 }, (_, index) => ({ role: 'assistant' as const, content: `a${index}`.padEnd(800, 'q') }))));
    const provider = new ScriptedProvider([
      (request) => {
        if (isSummaryCall(request)) controller.abort(new Error('stop'));
        return { text: 'late', delayMs: 10 };
      },
    ]);
    const result = await engine(provider).run('go', { session, signal: controller.signal });
    expect(result.status).toBe('canceled');
    expect(session.compaction()).toBeUndefined();
  });
});

describe('Engine.compact (CMP-5)', () => {
  it('compacts on request whatever the size, with a focus for the summary; nothing to compact is said', async () => {
    const session = newSession(history(4, 1_000).concat([{ role: 'assistant', content: 'read them' }, { role: 'user', content: 'next' }, { role: 'assistant', content: 'ok' }]));
    const provider = new ScriptedProvider([{ text: 'kept: the API', usage: { promptTokens: 100, completionTokens: 5 } }]);
    const result = await engine(provider, { contextWindowTokens: 128_000 }).compact({ session, focus: 'the API' });
    expect(result.status).toBe('completed');
    expect(provider.calls).toHaveLength(1);
    expect(provider.calls[0]?.request.messages[0]?.content).toContain('The user asked the notes to keep in particular: the API');
    expect(result.compaction).toMatchObject({ reason: 'manual', summary: 'kept: the API' });
    expect(result.finalText).toMatch(/^context compacted: [\d,]+ → [\d,]+ tokens \(\d+ messages summarised\)$/);
    expect(result.usage.totalTokens).toBe(105);
    expect(compactedView(session.history(), session.compaction())[0]?.content).toBe(task);
    const empty = await engine(new ScriptedProvider([])).compact({ session: newSession([]) });
    expect(empty.status).toBe('completed');
    expect(empty.finalText).toMatch(/^nothing to compact/);
    expect(empty.compaction).toBeUndefined();
  });
});

// The memory session keeps what the engine stores.
void MemorySession;

describe('what is not worth compacting', () => {
  it('a conversation whose older part is smaller than a summary would be is left as it is (no call made)', async () => {
    const session = newSession([
      { role: 'user', content: 'first' }, { role: 'assistant', content: 'one' },
      { role: 'user', content: 'second' }, { role: 'assistant', content: 'two' },
    ]);
    const provider = new ScriptedProvider([]);
    const result = await engine(provider, { contextWindowTokens: 128_000 }).compact({ session });
    expect(result.finalText).toMatch(/^nothing to compact/);
    expect(provider.calls).toHaveLength(0);
    expect(session.compaction()).toBeUndefined();
  });
});

describe('a server whose context is smaller than claw assumes (CMP-1)', () => {
  it('sizes the compaction by the limit the server states, retries once, and completes; later runs of the session keep that size', async () => {
    const old: Message[] = [{ role: 'user', content: task }];
    for (let index = 0; index < 30; index += 1) old.push({ role: 'assistant', content: `step ${index} `.padEnd(600, 'y') });
    const session = newSession(old);
    const overflowAt = new ClawError(
      'the model\'s server refused the request: the server said "This model\'s maximum context length is 4000 tokens. However, your messages resulted in 4620 tokens."',
      { code: 'context_length_exceeded' },
    );
    const provider = new ScriptedProvider([{ error: overflowAt }, { text: 'notes' }, { text: 'done' }, { text: 'again' }]);
    // claw assumes 128k (an unknown model); the server has 4,000.
    const claw = engine(provider, { contextWindowTokens: 128_000 });
    const result = await claw.run('go', { session });
    expect(result.status).toBe('completed');
    expect(session.compaction()).toMatchObject({ reason: 'overflow', summary: 'notes' });
    expect(isSummaryCall(provider.calls[1]?.request as ModelRequest)).toBe(true);
    const retried = provider.calls[2]?.request.messages ?? [];
    expect(retried[0]?.content).toBe(task);
    expect(retried.map((message) => message.content).join('').length / 4).toBeLessThan(3_600);
    // The next run of the session is sized by the server's 4,000 from the start.
    await claw.run('more', { session });
    expect(provider.calls).toHaveLength(4);
  });

  it('an overflow whose limit is not stated is sized a little under the refused request', async () => {
    const old: Message[] = [{ role: 'user', content: task }];
    for (let index = 0; index < 30; index += 1) old.push({ role: 'assistant', content: `step ${index} `.padEnd(600, 'y') });
    const provider = new ScriptedProvider([
      { error: new ClawError('the request exceeds the available context size', { code: 'context_length_exceeded' }) },
      { text: 'notes' },
      { text: 'done' },
    ]);
    const result = await engine(provider, { contextWindowTokens: 128_000 }).run('go', { session: newSession(old) });
    expect(result.status).toBe('completed');
    expect(provider.calls).toHaveLength(3);
  });
});

describe('pruning leaves what the model has not read yet', () => {
  it('the results of the latest calls are never pruned, however large', async () => {
    const session = newSession([
      { role: 'user', content: task },
      ...readStep(0, 6_000),
      { role: 'assistant', content: '', toolCalls: [{ id: 'big', name: 'read_file', arguments: '{"path":"big.ts"}' }] },
      { role: 'tool', toolCallId: 'big', content: 'NEWEST '.padEnd(9_000, 'n') },
    ]);
    // ~3,800 tokens on a 4,500 window: over 80 %; the newest result alone is over a quarter.
    const provider = new ScriptedProvider([{ text: 'done' }]);
    await engine(provider, { contextWindowTokens: 4_500 }).run('continue', { session });
    const last = provider.calls.at(-1)?.request.messages ?? [];
    expect(last.some((message) => message.content.startsWith('NEWEST '))).toBe(true);
    expect(last.some((message) => message.content.includes('[output of read_file "f0.ts"'))).toBe(true);
  });
});
