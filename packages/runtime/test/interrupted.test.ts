import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SessionEvent, SessionEventBody, ToolCall } from '@claw/core';
import {
  FileSessionManager,
  toolCallNeverStartedText,
  toolCallStartedText,
} from '@claw/session-store';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, scriptedFactory, settings, take, tempWorkspace } from './helpers.js';

afterEach(cleanUp);

const bash = (id: string, command: string): ToolCall => ({
  id,
  name: 'bash',
  arguments: JSON.stringify({ command }),
});

/**
 * Leaves a session as a process that stopped mid-task would (SES-7, SCALE-3): a task started, a
 * wave of two calls, the first one running, the second one waiting for an approval (and, with
 * `elicitation`, an MCP server's request for input waiting too).
 */
async function interruptedSession(
  workDir: string,
  id: string,
  asking = 'rm -rf build',
  elicitation?: SessionEventBody,
): Promise<number> {
  const manager = new FileSessionManager({ workDir });
  const lease = await manager.open(id, { workDir });
  const { session } = lease;
  session.appendEvent({ type: 'task_started', task_id: 'task-1', content: 'build it' });
  session.appendEvent({ type: 'state', state: 'running', task_id: 'task-1' });
  await session.append({ role: 'user', content: 'build it' });
  const running = bash('call-run', 'make');
  const waiting = bash('call-ask', asking);
  await session.append({ role: 'assistant', content: '', toolCalls: [running, waiting] });
  session.appendEvent({ type: 'tool_call', task_id: 'task-1', tool_call_id: 'call-run', tool_name: 'bash', arguments: running.arguments });
  await session.toolStarted(running);
  session.appendEvent({
    type: 'approval_request', task_id: 'task-1', request_id: 'req-1', tool_name: 'bash',
    risk: 'dangerous', reason: 'deletes files', arguments: waiting.arguments,
  });
  if (elicitation !== undefined) session.appendEvent(elicitation);
  const last = session.appendEvent({ type: 'state', state: 'awaiting_approval', task_id: 'task-1' });
  await last.written;
  await session.flush();
  await lease.release();
  await manager.close();
  return last.event.seq;
}

/**
 * Leaves a session as a process killed mid-wave would: two bash calls started (their tool_call
 * events stored), those in `finished` ended with their tool_result event stored, but the wave's
 * Observations not yet appended (they go in once every call of the wave ended).
 */
async function wave(workDir: string, id: string, options: { finished: string[] }): Promise<number> {
  const manager = new FileSessionManager({ workDir });
  const lease = await manager.open(id, { workDir });
  const { session } = lease;
  session.appendEvent({ type: 'task_started', task_id: 'task-1', content: 'build it' });
  await session.append({ role: 'user', content: 'build it' });
  const calls = [bash('call-a', 'make a'), bash('call-b', 'make b')];
  await session.append({ role: 'assistant', content: '', toolCalls: calls });
  let last = session.appendEvent({ type: 'state', state: 'running', task_id: 'task-1' });
  for (const call of calls) {
    last = session.appendEvent({ type: 'tool_call', task_id: 'task-1', tool_call_id: call.id, tool_name: 'bash', arguments: call.arguments });
    await session.toolStarted(call);
  }
  for (const id of options.finished) {
    await session.toolFinished(id);
    last = session.appendEvent({ type: 'tool_result', task_id: 'task-1', tool_call_id: id, tool_name: 'bash', result: 'built', is_error: false });
  }
  await last.written;
  await session.flush();
  await lease.release();
  await manager.close();
  return last.event.seq;
}

describe('a task a stopped process left open is ended when the session is opened again (SES-7, SCALE-3)', () => {
  it('closes its question, reports each repaired call, fails the task as interrupted and goes idle', async () => {
    const workDir = await tempWorkspace();
    const lastSeq = await interruptedSession(workDir, 'crashed');
    const { factory } = scriptedFactory([{ text: 'carried on' }]);
    const runtime = await factory.createRuntime({ workDir, sessionId: 'crashed' });
    const view = runtime.snapshot();
    expect(view.state).toBe('idle');
    expect(view.pendingApprovals).toEqual([]);
    expect(view.task).toBeUndefined();
    const events = await take(runtime.events({ after: lastSeq }), 5);
    const bodies = events.map(({ session_id: _id, at: _at, ...body }) => body);
    expect(bodies).toEqual([
      {
        type: 'approval_resolved', seq: lastSeq + 1, task_id: 'task-1', request_id: 'req-1',
        decision: 'deny', by: 'canceled',
      },
      {
        type: 'tool_result', seq: lastSeq + 2, task_id: 'task-1', tool_call_id: 'call-run', tool_name: 'bash',
        result: toolCallStartedText, is_error: true,
      },
      {
        type: 'tool_result', seq: lastSeq + 3, task_id: 'task-1', tool_call_id: 'call-ask', tool_name: 'bash',
        result: toolCallNeverStartedText, is_error: true,
      },
      expect.objectContaining({ type: 'task_failed', seq: lastSeq + 4, task_id: 'task-1', code: 'task_interrupted' }),
      { type: 'state', seq: lastSeq + 5, state: 'idle' },
    ]);
    const failed = events[3] as Extract<SessionEvent, { type: 'task_failed' }>;
    expect(failed.error).toContain('bash call-run: started, outcome unknown; bash call-ask: never started');
    expect(failed.error).toContain('no tool was run again');

    // The session goes on: a new task runs, and opening it again ends nothing more.
    const task = runtime.start('carry on');
    expect((await task.wait()).finalText).toBe('carried on');
    await runtime.close();
    const again = await factory.createRuntime({ workDir, sessionId: 'crashed' });
    const seq = again.snapshot().seq;
    expect(again.cursorError(seq)).toBeUndefined();
    expect(again.snapshot().state).toBe('idle');
    await again.close();
    const reopened = await factory.createRuntime({ workDir, sessionId: 'crashed' });
    expect(reopened.snapshot().seq).toBe(seq);
    await reopened.close();
  });

  it('with resumeInterrupted, raises the questions again and goes on with the task (SCALE-3)', async () => {
    const workDir = await tempWorkspace();
    const lastSeq = await interruptedSession(workDir, 'resumed', 'echo resumed >> marker.txt');
    const { factory } = scriptedFactory([{ text: 'carried on' }], {
      settings: settings({ approval: 'ask' }),
      resumeInterrupted: true,
    });
    const asked: string[] = [];
    const runtime = await factory.createRuntime({
      workDir,
      sessionId: 'resumed',
      approvalHandler: {
        approve: (prompt) => {
          asked.push(`${prompt.toolName} ${prompt.arguments}`);
          return Promise.resolve('allow_once');
        },
      },
    });
    const events = runtime.events({ after: lastSeq });
    const seen: SessionEvent[] = [];
    for await (const event of events) {
      seen.push(event);
      if (event.type === 'task_completed') break;
    }
    const kinds = seen.map((event) => ('tool_call_id' in event ? `${event.type} ${event.tool_call_id}` : event.type));
    expect(kinds).toEqual([
      'approval_resolved',
      'tool_result call-run',
      'tool_result call-ask',
      'state',
      'tool_call call-ask-resumed',
      'approval_request',
      'state',
      'approval_resolved',
      'state',
      'tool_result call-ask-resumed',
      'thinking',
      'text_delta',
      'usage',
      'text_completed',
      'task_completed',
    ]);
    // The same task goes on: its question was raised again (a new request), answered, and run once.
    expect(seen.every((event) => !('task_id' in event) || event.task_id === 'task-1')).toBe(true);
    const requests = seen.filter((event) => event.type === 'approval_request');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ tool_name: 'bash', arguments: JSON.stringify({ command: 'echo resumed >> marker.txt' }) });
    expect(asked).toEqual([`bash ${JSON.stringify({ command: 'echo resumed >> marker.txt' })}`]);
    expect(await readFile(join(workDir, 'marker.txt'), 'utf8')).toBe('resumed\n');
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed', task_id: 'task-1', content: 'carried on' });
    // The started call was not run again, and the history pairs every call.
    const history = runtime.snapshot().history;
    expect(history.filter((message) => message.role === 'tool').map((message) => message.role === 'tool' && message.toolCallId))
      .toEqual(['call-run', 'call-ask', 'call-ask-resumed']);
    await runtime.close();
  });

  it('withdraws the requests for input it left waiting, also when the task goes on (MCP-7, SCALE-3)', async () => {
    const workDir = await tempWorkspace();
    const lastSeq = await interruptedSession(workDir, 'asked', 'echo resumed >> marker.txt', {
      type: 'elicitation_request', task_id: 'task-1', request_id: 'input-1', server: 'sdk', message: 'Who?',
      requested_schema: { type: 'object', properties: { name: { type: 'string' } } },
    });
    const { factory } = scriptedFactory([{ text: 'carried on' }], {
      settings: settings({ approval: 'ask' }),
      resumeInterrupted: true,
    });
    const runtime = await factory.createRuntime({
      workDir,
      sessionId: 'asked',
      approvalHandler: { approve: () => Promise.resolve('allow_once') },
    });
    const seen: SessionEvent[] = [];
    for await (const event of runtime.events({ after: lastSeq })) {
      seen.push(event);
      if (event.type === 'task_completed') break;
    }
    // Its MCP server went with the process that asked: the request is withdrawn before the task
    // goes on, so whoever follows the session no longer sees it waiting.
    const kinds = seen.map((event) => event.type);
    expect(kinds.slice(0, 3)).toEqual(['approval_resolved', 'elicitation_resolved', 'tool_result']);
    expect(seen[1]).toMatchObject({ task_id: 'task-1', request_id: 'input-1', action: 'cancel', by: 'canceled' });
    expect(kinds.filter((kind) => kind === 'elicitation_resolved')).toHaveLength(1);
    expect(seen.at(-1)).toMatchObject({ type: 'task_completed', task_id: 'task-1' });
    await runtime.close();
  });

  it('a task whose history a process repaired before it stopped too still gets a result for each call (soak D2)', async () => {
    const workDir = await tempWorkspace();
    const lastSeq = await wave(workDir, 'twice', { finished: [] });
    // A process opens the session (its history is repaired and stored) and stops before it ends
    // the task: the next one finds nothing to repair, and must still answer both calls.
    const manager = new FileSessionManager({ workDir });
    const lease = await manager.open('twice', { workDir });
    expect(lease.session.lastRepair().map(({ call }) => call.id)).toEqual(['call-a', 'call-b']);
    await lease.session.flush();
    await lease.release();
    await manager.close();
    const { factory } = scriptedFactory([]);
    const runtime = await factory.createRuntime({ workDir, sessionId: 'twice' });
    const results = (await take(runtime.events({ after: lastSeq }), 4)).filter((event) => event.type === 'tool_result');
    expect(results.map((event) => [event.tool_call_id, event.result])).toEqual([
      ['call-a', toolCallStartedText],
      ['call-b', toolCallStartedText],
    ]);
    await runtime.close();
  });

  it('a call whose tool_result event was stored before the crash gets no second one (soak D2)', async () => {
    const workDir = await tempWorkspace();
    const lastSeq = await wave(workDir, 'half', { finished: ['call-a'] });
    const { factory } = scriptedFactory([]);
    const runtime = await factory.createRuntime({ workDir, sessionId: 'half' });
    const events = await take(runtime.events({ after: lastSeq }), 3);
    expect(events.map((event) => ('tool_call_id' in event ? `${event.type} ${event.tool_call_id}` : event.type)))
      .toEqual(['tool_result call-b', 'task_failed', 'state']);
    // The history pairs each call once: call-a with the result it stored.
    const observations = runtime.snapshot().history.filter((message) => message.role === 'tool');
    expect(observations.map((message) => message.role === 'tool' && [message.toolCallId, message.content])).toEqual([
      ['call-a', 'built'],
      ['call-b', toolCallStartedText],
    ]);
    await runtime.close();
  });

  it('leaves a session whose last task ended as it is', async () => {
    const workDir = await tempWorkspace();
    const { factory } = scriptedFactory([{ text: 'done' }]);
    const runtime = await factory.createRuntime({ workDir, sessionId: 'clean' });
    await runtime.start('hello').wait();
    const seq = runtime.snapshot().seq;
    await runtime.close();
    const reopened = await factory.createRuntime({ workDir, sessionId: 'clean' });
    expect(reopened.snapshot().seq).toBe(seq);
    await reopened.close();
  });
});
