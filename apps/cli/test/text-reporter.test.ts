import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Output } from '../src/output.js';
import { createStyle } from '../src/style.js';
import { createTextReporter, modelWaitNotice, toolProgressEveryMs } from '../src/text-reporter.js';

/** A reporter over two collected outputs (the answer, the activity), as `claw -p` has them. */
function reporterOverStreams() {
  const answerStream = new PassThrough();
  const activityStream = new PassThrough();
  const text = { answer: '', activity: '' };
  answerStream.setEncoding('utf8').on('data', (chunk: string) => void (text.answer += chunk));
  activityStream.setEncoding('utf8').on('data', (chunk: string) => void (text.activity += chunk));
  const reporter = createTextReporter({
    answer: new Output(answerStream),
    activity: new Output(activityStream),
    style: createStyle(false),
  });
  return { reporter, text };
}

/** Runs the timers due within `ms` and lets the writes they started finish. */
async function pass(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await new Promise((resolve) => setImmediate(resolve));
}

const waitingLines = (activity: string): string[] =>
  activity.split('\n').filter((line) => line.includes('waiting for the model'));

describe('the text reporter tells of a model that stays silent', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('says it is waiting after 5 s of silence, then again every 15 s', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onThinking?.({ turn: 1 });
    await pass(modelWaitNotice.firstMs - 1);
    expect(waitingLines(text.activity)).toEqual([]);
    await pass(1);
    expect(waitingLines(text.activity)).toEqual(['… waiting for the model: 5 s so far']);
    await pass(modelWaitNotice.everyMs);
    expect(waitingLines(text.activity)).toEqual([
      '… waiting for the model: 5 s so far',
      '… still waiting for the model: 20 s so far',
    ]);
    // The first words of the answer end the wait: nothing more while the answer streams.
    await reporter.onTextDelta?.('Hello');
    await pass(modelWaitNotice.everyMs * 3);
    expect(waitingLines(text.activity)).toHaveLength(2);
    expect(text.answer).toBe('Hello');
  });

  it('says nothing when the model answers in time, whatever its answer is', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onThinking?.({ turn: 1 });
    await pass(modelWaitNotice.firstMs - 100);
    await reporter.onTextDelta?.('Hi');
    await reporter.onTextCompleted?.('Hi');
    await pass(modelWaitNotice.firstMs * 4);
    // A reply of tool calls only: the first sign of it is the call.
    await reporter.onThinking?.({ turn: 2 });
    await pass(modelWaitNotice.firstMs - 100);
    await reporter.onToolCall?.({ id: 'call_1', name: 'read_file', arguments: JSON.stringify({ path: 'a.txt' }) });
    await pass(modelWaitNotice.firstMs * 4);
    expect(waitingLines(text.activity)).toEqual([]);
    expect(text.activity).toContain('▸ read_file');
  });

  it('counts a retried call from the moment its next attempt starts', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onThinking?.({ turn: 1 });
    await pass(3_000);
    await reporter.onModelRetry?.({ attempt: 1, attempts: 3, delayMs: 2_000, reason: 'HTTP 503' });
    expect(text.activity).toContain('↻ model call failed, trying again in 2.0 s (attempt 2 of 3): HTTP 503');
    // 5 s after the call started, but only 3 s after the new attempt did.
    await pass(modelWaitNotice.firstMs);
    expect(waitingLines(text.activity)).toEqual([]);
    await pass(2_000);
    expect(waitingLines(text.activity)).toEqual(['… waiting for the model: 5 s so far']);
  });

  it('stops once the task ended, even if the model never answered', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onThinking?.({ turn: 1 });
    await pass(1_000);
    reporter.taskEnded();
    await pass(modelWaitNotice.everyMs * 4);
    expect(waitingLines(text.activity)).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('starts the waiting line on a line of its own, and survives an output that closed', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onTextDelta?.('partial answer');
    await reporter.onThinking?.({ turn: 2 });
    await pass(modelWaitNotice.firstMs);
    expect(text.answer).toBe('partial answer\n');
    expect(text.activity).toBe('… waiting for the model: 5 s so far\n');
    reporter.taskEnded();

    const closed = new PassThrough();
    closed.destroy();
    const onClosed = createTextReporter({
      answer: new Output(closed),
      activity: new Output(closed),
      style: createStyle(false),
    });
    await onClosed.onThinking?.({ turn: 1 });
    // The line cannot be written; that is no reason to fail (or crash) anything: the wait goes
    // on (its next line is due), while a line the run waits for does fail.
    await pass(modelWaitNotice.firstMs * 2);
    expect(vi.getTimerCount()).toBe(1);
    await expect(onClosed.onToolCall?.({ id: 'c1', name: 'bash', arguments: '{}' })).rejects.toThrow();
    onClosed.taskEnded();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the text reporter shows the progress of running tools', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const report = (toolCallId: string, progress: number, message?: string) => ({
    toolCallId,
    toolName: toolCallId.startsWith('mcp') ? 'docs__index' : 'bash',
    progress,
    ...(message === undefined ? {} : { message }),
  });
  const progressLines = (activity: string): string[] => activity.split('\n').filter((line) => line.startsWith('  … '));

  it('one line per report, at most one every 2 s for each call, none after its result', async () => {
    const { reporter, text } = reporterOverStreams();
    await reporter.onToolCall?.({ id: 'call_1', name: 'bash', arguments: '{"command":"npm test"}' });
    await reporter.onToolCall?.({ id: 'mcp_2', name: 'docs__index', arguments: '{}' });
    await reporter.onToolProgress?.(report('call_1', 5_000, 'running for 5s; last output: "PASS a"'));
    await reporter.onToolProgress?.({ ...report('mcp_2', 1), total: 4 });
    // Too soon after the last line of each call: not shown.
    await pass(toolProgressEveryMs - 1);
    await reporter.onToolProgress?.(report('call_1', 6_999, 'running for 7s; last output: "PASS b"'));
    await reporter.onToolProgress?.({ ...report('mcp_2', 2), total: 4 });
    await pass(1);
    await reporter.onToolProgress?.({ ...report('mcp_2', 3, 'indexing'), total: 4 });
    await reporter.onToolResult?.({ toolCallId: 'mcp_2', toolName: 'docs__index', content: 'indexed', isError: false });
    await reporter.onToolProgress?.({ ...report('mcp_2', 4), total: 4 });
    expect(progressLines(text.activity)).toEqual([
      '  … bash: running for 5s; last output: "PASS a"',
      '  … docs__index: 1 of 4',
      '  … docs__index: indexing (3 of 4)',
    ]);
    // A call never shown running has no progress to show either.
    await reporter.onToolProgress?.(report('call_unknown', 1, 'late'));
    expect(progressLines(text.activity)).toHaveLength(3);
  });
});
