import { ChannelError } from '@claw/channel';
import { describe, expect, it } from 'vitest';
import type { ServerEvent } from '@claw/channel/protocol';
import { tallyEvent, taskResultJson } from '../src/json-result.js';

const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms).toISOString();
const event = (fields: Record<string, unknown>) => ({ session_id: 's', ...fields }) as ServerEvent;

describe('claw -p --output json: the result object', () => {
  it('counts the task\'s session events (not the connection\'s), and ends canceled with its reason', () => {
    const events = [
      event({ type: 'session_opened', state: 'idle', last_seq: 0, pending_approvals: [], role: 'controller', workdir: '/w' }),
      event({ type: 'task_started', task_id: 'task-1', seq: 1, at: at(0), content: 'go' }),
      event({ type: 'thinking', task_id: 'task-1', seq: 2, at: at(10), turn: 1 }),
      event({ type: 'tool_progress', task_id: 'task-1', tool_call_id: 'c1', tool_name: 'bash', progress: 5000 }),
    ];
    const tally = events.reduce(tallyEvent, undefined);
    expect(tally).toMatchObject({ taskId: 'task-1', modelCalls: 1 });
    const end = { type: 'task_canceled' as const, task_id: 'task-1', session_id: 's', seq: 3, at: at(2500), reason: 'canceled by SIGINT' };
    expect(taskResultJson('s', { ok: true, end }, tally)).toEqual({
      type: 'result', session_id: 's', task_id: 'task-1', status: 'canceled', reason: 'canceled by SIGINT',
      model_calls: 1, tool_calls: 0, failed_tool_calls: 0, tokens: 0, cached_tokens: 0, cost_usd: 0, unpriced_calls: 0,
      elapsed_ms: 2500,
    });
  });

  it('says what went wrong when no task ran (the session could not be opened), without figures', () => {
    const error = new ChannelError('session "s" is in use by another claw process (pid 7)', { code: 'session_locked', sessionId: 's' });
    expect(taskResultJson('s', { ok: false, error }, undefined)).toEqual({
      type: 'result', session_id: 's', status: 'error',
      error: { code: 'session_locked', message: 'session "s" is in use by another claw process (pid 7)' },
    });
  });
});
