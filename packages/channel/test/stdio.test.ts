import { UnattendedApprovals } from '@claw/approval';
import { afterEach, describe, expect, it } from 'vitest';
import { serverEventSchema, streamTask, type ServerEvent } from '../src/index.js';
import { cleanUp, factoryWith, workspace, writeCall } from './helpers.js';

afterEach(cleanUp);

// Each write is one or more whole lines (what waits goes out in one write).
const parse = (writes: string[]): ServerEvent[] =>
  writes.flatMap((text) => {
    expect(text.endsWith('\n')).toBe(true);
    return text.slice(0, -1).split('\n').map((line) => serverEventSchema.parse(JSON.parse(line)));
  });

describe('streamTask: the stdio transport (CLI-7)', () => {
  it('streams session_opened, the task\'s events with seq, and ends with its end event', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([writeCall('w1'), { text: 'done' }]);
    const lines: string[] = [];
    const result = await streamTask({
      runtimes,
      workDir,
      sessionId: 'cli',
      prompt: 'write',
      write: async (line) => void lines.push(line),
      approvalHandler: new UnattendedApprovals(),
    });
    const events = parse(lines);
    expect(result).toMatchObject({ ok: true, end: { type: 'task_completed', content: 'done' } });
    expect(events[0]).toMatchObject({ type: 'session_opened', session_id: 'cli', last_seq: 0 });
    expect(events.at(-1)).toEqual(result.ok ? result.end : undefined);
    expect(events.filter((event) => event.type === 'history')).toEqual([]);
    const resolved = events.find((event) => event.type === 'approval_resolved');
    expect(resolved).toMatchObject({ decision: 'deny', by: 'stdio:cli' });
    const seqs = events.slice(1).map((event) => ('seq' in event ? event.seq : -1));
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
  });

  it('writes the events that waited for a slow output together, in order, in one write', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([writeCall('w1'), writeCall('w2'), { text: 'done' }]);
    const writes: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const result = streamTask({
      runtimes, workDir, sessionId: 'cli', prompt: 'write',
      // The first write (session_opened) is slow: the task's events wait for it meanwhile.
      write: async (text) => {
        writes.push(text);
        if (writes.length === 1) await held;
      },
      approvalHandler: new UnattendedApprovals(),
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(writes).toHaveLength(1);
    release();
    expect(await result).toMatchObject({ ok: true, end: { type: 'task_completed' } });
    expect(writes[1]?.split('\n').length).toBeGreaterThan(2);
    const events = parse(writes);
    const seqs = events.slice(1).map((event) => ('seq' in event ? event.seq : -1));
    expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    expect(events.at(-1)).toMatchObject({ type: 'task_completed', content: 'done' });
  });

  it('cancels on abort and still ends with task_canceled', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([{ text: 'never', delayMs: 60_000 }]);
    const lines: string[] = [];
    const controller = new AbortController();
    const running = streamTask({
      runtimes, workDir, sessionId: 'cli', prompt: 'wait',
      write: async (line) => {
        lines.push(line);
        if (line.includes('"thinking"')) controller.abort(new Error('canceled by SIGINT'));
      },
      signal: controller.signal,
    });
    const result = await running;
    expect(result).toMatchObject({ ok: true, end: { type: 'task_canceled', reason: 'canceled by SIGINT' } });
    expect(parse(lines).at(-1)?.type).toBe('task_canceled');
  });

  it('cancels the task when the output breaks, instead of running unseen', async () => {
    const workDir = await workspace();
    const runtimes = factoryWith([writeCall('w1'), { text: 'unseen' }]);
    const result = await streamTask({
      runtimes, workDir, sessionId: 'cli', prompt: 'write',
      write: async (line) => {
        if (line.includes('"thinking"')) throw new Error('EPIPE');
      },
      approvalHandler: { approve: () => Promise.resolve('allow_once' as const) },
    });
    expect(result).toMatchObject({ ok: false, closed: { code: 'write_failed' } });
    const runtime = await runtimes.createRuntime({ workDir, sessionId: 'cli' });
    await runtime.idle();
    const last = runtime.snapshot().seq;
    const tail: ServerEvent[] = [];
    for await (const event of runtime.events({ after: last - 2 })) {
      tail.push(event);
      if (tail.length === 2) break;
    }
    expect(tail.map((event) => event.type)).toEqual(['task_canceled', 'state']);
    expect(tail[0]).toMatchObject({ reason: 'ended by stdio' });
  });

  it('reports a session it cannot open (streamed, and returned)', async () => {
    const workDir = await workspace();
    // The holder's model call lasts until the end of the test: the session stays busy.
    const runtimes = factoryWith([{ text: 'held', delayMs: 60_000 }]);
    const holder = await runtimes.createRuntime({ workDir, sessionId: 'busy' });
    const held = holder.start('hold');
    const lines: string[] = [];
    const result = await streamTask({
      runtimes, workDir, sessionId: 'busy', prompt: 'second',
      write: async (line) => void lines.push(line),
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'session_busy' } });
    expect(parse(lines).at(-1)).toMatchObject({ type: 'error', code: 'session_busy' });
    expect(held.status).toBe('running');
    held.cancel();
  });
});
