import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compactedView, type ModelRequest } from '@claw/core';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeFactory, resolveSettings } from '../src/index.js';
import { cleanUp, isTaskEnd, scriptedFactory, settings, tempWorkspace, until } from './helpers.js';

afterEach(cleanUp);

const isSummaryCall = (request: ModelRequest): boolean =>
  request.tools === undefined && request.messages[0]?.content.startsWith('You write hand-off notes') === true;

/** A reply that reads a file whose content is long (the tool result fills the context). */
const readBig = (index: number) => ({ toolCalls: [{ name: 'read_file', arguments: { path: `big${index % 2}.txt` } }] });

describe('compaction through the runtime (CMP-4, CMP-5)', () => {
  it('a long task on a small window: compacted, stored, told as an event; the summary call counted in usage', async () => {
    const workDir = await tempWorkspace();
    await writeFile(join(workDir, 'big0.txt'), 'a'.repeat(6_000));
    await writeFile(join(workDir, 'big1.txt'), 'b'.repeat(6_000));
    const { factory, provider } = scriptedFactory(
      [
        ...Array.from({ length: 12 }, (_, index) => (request: ModelRequest) =>
          isSummaryCall(request) ? { text: 'Goal: read the files.', usage: { promptTokens: 500, completionTokens: 10 } } : readBig(index)),
        (request: ModelRequest) => (isSummaryCall(request) ? { text: 'summary again' } : { text: 'all read' }),
        { text: 'all read' },
        { text: 'all read' },
      ],
      { settings: settings({ contextWindowTokens: 8_000, approval: 'allow' }), instructions: false, systemPrompt: 'short' },
    );
    const runtime = await factory.createRuntime({ workDir });
    const events = runtime.events({ after: 0 });
    const task = runtime.start('Read big0.txt and big1.txt, again and again.');
    const seen = await until(events, isTaskEnd);
    expect((await task.wait()).status).toBe('completed');
    const compacted = seen.filter((event) => event.type === 'context_compacted');
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted[0]).toMatchObject({ reason: 'threshold' });
    // Every request after the first compaction starts with the task, verbatim.
    const first = provider.calls.findIndex((call) => isSummaryCall(call.request));
    for (const call of provider.calls.slice(first + 1)) {
      if (isSummaryCall(call.request)) continue;
      expect(call.request.messages[1]?.content).toBe('Read big0.txt and big1.txt, again and again.');
    }
    // Stored with the session: a new factory (another process) sees the same compacted view.
    const stored = runtime.session.compaction();
    expect(stored).toBeDefined();
    await factory.close();
    const again = new RuntimeFactory({
      settings: await resolveSettings({ workDir, overrides: { contextWindowTokens: 8_000 } }),
      provider,
      spawner: (await import('@claw/sandbox')).plainCommandSpawner(),
    });
    const reopened = await again.createRuntime({ workDir });
    expect(reopened.session.compaction()).toEqual(stored);
    expect(compactedView(reopened.session.history(), reopened.session.compaction())[0]?.content)
      .toBe('Read big0.txt and big1.txt, again and again.');
    // The history event says where, for a client that starts from it.
    expect(reopened.snapshot().compaction).toEqual(stored);
    await again.close();
  });

  it('Runtime.compact: a task of its own that summarises now, with a focus; a busy session refuses it', async () => {
    const workDir = await tempWorkspace();
    const { factory, provider } = scriptedFactory([
      // Answers long enough to be worth a summary (a few short lines are not).
      { text: 'first answer '.padEnd(4_000, '.') },
      { text: 'second answer '.padEnd(4_000, '.') },
      { text: 'Goal: answer twice. Keep: the API.', usage: { promptTokens: 50, completionTokens: 9 } },
      { text: 'never', delayMs: 60_000 },
    ]);
    const runtime = await factory.createRuntime({ workDir });
    await runtime.start('question one').wait();
    await runtime.start('question two').wait();
    const events = runtime.events();
    const result = await runtime.compact({ focus: 'the API' }).wait();
    expect(result.status).toBe('completed');
    expect(result.finalText).toMatch(/^context compacted: [\d,]+ → [\d,]+ tokens \(\d+ messages? summarised\)$/);
    expect(provider.calls[2]?.request.messages[0]?.content).toContain('keep in particular: the API');
    const seen = await until(events, isTaskEnd);
    // The summary call's usage, then the compaction it made, then the end.
    // The summary call is announced like any model call (clients show the wait), then counted.
    expect(seen.map((event) => event.type))
      .toEqual(['task_started', 'state', 'thinking', 'usage', 'context_compacted', 'task_completed']);
    expect(seen[2]).toMatchObject({ type: 'thinking', turn: 1, purpose: 'summary' });
    expect(seen[0]).toMatchObject({ type: 'task_started', content: '/compact the API' });
    expect(seen.find((event) => event.type === 'context_compacted')).toMatchObject({
      reason: 'manual',
      summary: 'Goal: answer twice. Keep: the API.',
    });
    expect(seen.find((event) => event.type === 'usage')).toMatchObject({ call: { total_tokens: 59 } });
    // The conversation's history is whole; the model sees the compacted view.
    expect(runtime.session.history().map((message) => message.content.slice(0, 13))).toEqual(['question one', 'first answer ', 'question two', 'second answer']);
    const busy = runtime.start('long one');
    expect(() => runtime.compact()).toThrow(/running a task|is busy|already/);
    busy.cancel();
    await busy.wait();
  });
});
