import { defineTool } from '@claw/core';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { context, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Engine, spanAttributes, spanNames } from '../src/index.js';
import { newSession } from './helpers.js';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = tracerProvider.getTracer('test');

afterEach(() => exporter.reset());

/** A clock the test moves by hand, so every figure is exact. */
function manualClock() {
  let time = 1_000;
  return { now: () => time, advance: (ms: number) => void (time += ms) };
}

describe('spans (OBS-1, OBS-2)', () => {
  it('a scripted run yields Agent.Run with ttfb, tokens and tool wall time, and its children', async () => {
    const clock = manualClock();
    const slowTool = defineTool({
      name: 'slow',
      description: 'Takes 30 ms of clock time.',
      risk: 'safe',
      schema: z.object({}),
      async execute() {
        clock.advance(30);
        return 'done';
      },
    });
    const provider = new ScriptedProvider([
      () => {
        clock.advance(120); // time to first token of the first call
        return { textChunks: ['Looking'], toolCalls: [{ name: 'slow', arguments: {} }], usage: { promptTokens: 100, completionTokens: 10 } };
      },
      () => {
        clock.advance(70);
        return { text: 'Done.', usage: { promptTokens: 150, completionTokens: 20 } };
      },
    ]);
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [slowTool], tracer, now: clock.now, model: 'gpt-test' });
    const result = await engine.run('go', { session: newSession() });
    expect(result.status).toBe('completed');

    const spans = exporter.getFinishedSpans();
    const root = spans.find((span) => span.name === spanNames.run);
    expect(root?.attributes).toMatchObject({
      [spanAttributes.ttfbMs]: 120,
      [spanAttributes.promptTokens]: 250,
      [spanAttributes.completionTokens]: 30,
      [spanAttributes.toolWallMs]: 30,
      'gen_ai.usage.input_tokens': 250,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': 'test-session',
      'claw.run.status': 'completed',
      'claw.run.turns': 2,
    });
    const rootId = root?.spanContext().spanId;
    const thinking = spans.filter((span) => span.name === spanNames.thinking);
    expect(thinking.map((span) => span.attributes[spanAttributes.ttfbMs])).toEqual([120, 70]);
    expect(thinking.map((span) => span.attributes['gen_ai.request.model'])).toEqual(['gpt-test', 'gpt-test']);
    expect(thinking[0]?.attributes).toMatchObject({ prompt_tokens: 100, completion_tokens: 10, 'gen_ai.response.finish_reasons': ['tool_calls'] });
    for (const span of thinking) expect(span.parentSpanContext?.spanId).toBe(rootId);
    const action = spans.find((span) => span.name === spanNames.action);
    expect(action?.parentSpanContext?.spanId).toBe(rootId);
    expect(action?.attributes).toMatchObject({ [spanAttributes.toolWallMs]: 30, 'claw.tool.count': 1 });
    const tool = spans.find((span) => span.name === spanNames.tool);
    expect(tool?.parentSpanContext?.spanId).toBe(action?.spanContext().spanId);
    expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'slow', 'claw.tool.outcome': 'ok' });
  });

  it('a run under a parent span (an "Eval" span) is its child', async () => {
    const provider = new ScriptedProvider([{ text: 'hi' }]);
    const evalSpan = tracer.startSpan('Eval');
    await new Engine({ provider, gate: new AllowAllGate(), tracer }).run('go', {
      session: newSession(),
      traceContext: trace.setSpan(context.active(), evalSpan),
    });
    evalSpan.end();
    const root = exporter.getFinishedSpans().find((span) => span.name === spanNames.run);
    expect(root?.parentSpanContext?.spanId).toBe(evalSpan.spanContext().spanId);
  });

  it('a failed run marks the root span as an error', async () => {
    const provider = new ScriptedProvider([{ error: new Error('boom') }]);
    await new Engine({ provider, gate: new AllowAllGate(), tracer }).run('go', { session: newSession() });
    const root = exporter.getFinishedSpans().find((span) => span.name === spanNames.run);
    expect(root?.status.code).toBe(2);
    expect(root?.attributes['claw.run.status']).toBe('failed');
  });
});

describe('the summary call of a compaction (CMP-6)', () => {
  it('is a Compact span under the run, with its tokens; the run\'s time to first token is its turn\'s', async () => {
    const old = [{ role: 'user' as const, content: 'the task' }];
    const steps = Array.from({ length: 30 }, (_, index) => ({ role: 'assistant' as const, content: `step ${index} `.padEnd(500, 'y') }));
    const provider = new ScriptedProvider([
      { text: 'the notes', usage: { promptTokens: 2_000, completionTokens: 30 } },
      { text: 'done', usage: { promptTokens: 900, completionTokens: 2 } },
    ]);
    const engine = new Engine({ provider, gate: new AllowAllGate(), tracer, systemPrompt: '', contextWindowTokens: 4_000 });
    const result = await engine.run('go on', { session: newSession([...old, ...steps]) });
    expect(result.status).toBe('completed');
    const spans = exporter.getFinishedSpans();
    const compact = spans.filter((span) => span.name === spanNames.compact);
    expect(compact).toHaveLength(1);
    const run = spans.find((span) => span.name === spanNames.run);
    expect(compact[0]?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
    expect(compact[0]?.attributes[spanAttributes.promptTokens]).toBe(2_000);
    expect(spans.filter((span) => span.name === spanNames.thinking)).toHaveLength(1);
    // The run's tokens hold both calls (the summary counts, CMP-6).
    expect(run?.attributes[spanAttributes.promptTokens]).toBe(2_900);
  });
});
