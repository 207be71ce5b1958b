import { findUnpairedCalls, type Message } from '@claw/core';
import { AllowAllGate, RecordingReporter, ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { Engine, canceledObservationText } from '../src/index.js';
import { newSession, recordTool } from './helpers.js';

const canceled = (toolCallId: string) => ({ role: 'tool', toolCallId, content: canceledObservationText, isError: true });

/**
 * EnsureToolObservations (ENG-5) pairs what core's `findUnpairedCalls` finds missing (the one
 * definition the session store's repair, SES-7, uses too), and only the trailing group: the calls
 * of the last assistant message, whose Observations belong at the end of the history.
 */
describe('pairing the calls a stopped run left open (ENG-5)', () => {
  it('a reply that reuses a call id gets one Observation for it, as core counts it', async () => {
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'dup', name: 'record', arguments: { text: 'a' } },
          { id: 'dup', name: 'record', arguments: { text: 'b' } },
          { id: 'other', name: 'record', arguments: { text: 'c' } },
        ],
      },
    ]);
    const session = newSession();
    const effects: string[] = [];
    // The reporter fails on the assistant message: the run stops before the wave.
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] }).run('go', {
      session,
      reporter: new RecordingReporter({ failOn: { type: 'message', nth: 2 } }),
    });
    expect(result.status).toBe('failed');
    expect(effects).toEqual([]);
    expect(session.history().slice(2)).toEqual([canceled('dup'), canceled('other')]);
    expect(findUnpairedCalls(session.history())).toEqual([]);
  });

  it('leaves an earlier gap to the session\'s repair, and pairs only the trailing calls, in call order', async () => {
    // An interrupted earlier run left "old" open; this session has no repair (no beforeRun).
    const earlier: Message[] = [
      { role: 'user', content: 'before' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'old', name: 'record', arguments: '{}' }] },
      { role: 'user', content: 'again' },
    ];
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'first', name: 'record', arguments: { text: 'a' } },
          { id: 'second', name: 'record', arguments: { text: 'b' } },
        ],
      },
    ]);
    const session = newSession(earlier);
    const result = await new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])] }).run('go', {
      session,
      reporter: new RecordingReporter({ failOn: { type: 'message', nth: 2 } }),
    });
    expect(result.status).toBe('failed');
    const history = session.history();
    expect(history.slice(0, 3)).toEqual(earlier);
    expect(history.slice(5)).toEqual([canceled('first'), canceled('second')]);
    expect(findUnpairedCalls(history).map((gap) => gap.calls.map((call) => call.id))).toEqual([['old']]);
  });
});
