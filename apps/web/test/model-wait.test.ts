import { describe, expect, it } from 'vitest';
import { modelWaitText, waitingSinceAfter } from '../src/state/model-wait.js';
import { SessionScript, prompted, receive, view, withFreshSession } from './fixtures.js';

describe('the line of a silent model call', () => {
  it('starts with the call, afresh after a retry\'s wait, and stops with any content or the task\'s end', () => {
    const s1 = new SessionScript('s1');
    const arrived = 1_000_000;
    const since = (events: ReturnType<SessionScript['event']>[], start?: number) =>
      events.reduce<number | undefined>((at, event, index) => waitingSinceAfter(at, event, arrived + index), start);
    expect(since([s1.event('thinking', { turn: 1 })])).toBe(arrived);
    expect(since([s1.event('thinking', { turn: 1 }), s1.event('state', { state: 'running' })])).toBe(arrived);
    expect(since([s1.event('model_retry', { attempt: 1, attempts: 3, delay_ms: 400, error: 'HTTP 503' })], arrived)).toBe(arrived + 400);
    for (const content of [
      s1.event('text_delta', { content: 'hi' }),
      // The model's reasoning is content too: the model is not silent (REAL-3: any delta counts).
      s1.event('thinking_delta', { content: 'hmm' }),
      s1.event('tool_call', { tool_call_id: 'c1', tool_name: 'read_file', arguments: '{}' }),
      s1.event('task_failed', { error: 'x', code: 'y' }),
      s1.event('task_canceled', {}),
    ]) {
      expect(since([content], arrived)).toBeUndefined();
    }
    // A tool's result or an approval neither starts nor stops a wait: calls and content do.
    const result = s1.event('tool_result', { tool_call_id: 'c1', tool_name: 'read_file', result: 'a', is_error: false });
    const approval = s1.approvalRequest('r1');
    expect(since([result, approval])).toBeUndefined();
    expect(since([result, approval], arrived)).toBe(arrived);
  });

  it('says so from 5 s of silence, counting whole seconds, in the terminal\'s words', () => {
    expect(modelWaitText(undefined, 10_000)).toBeUndefined();
    expect(modelWaitText(0, 4_999)).toBeUndefined();
    expect(modelWaitText(0, 5_000)).toBe('waiting for the model: 5 s so far');
    expect(modelWaitText(0, 12_700)).toBe('waiting for the model: 12 s so far');
  });

  it('is kept on the session\'s view, and let go when the transcript is rebuilt from the history', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, s1.event('thinking', { turn: 1 }));
    expect(view(state, 's1').waitingSince).toBeTypeOf('number');
    state = receive(state, { type: 'history', session_id: 's1', seq: s1.seq, messages: [] });
    expect(view(state, 's1').waitingSince).toBeUndefined();
  });
});
