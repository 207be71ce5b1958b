import type { Message } from '@claw/core';
import { describe, expect, it } from 'vitest';
import {
  describeRepair,
  repairHistory,
  toolCallIncompleteText,
  toolCallNeverStartedText,
  toolCallStartedText,
  toolCallUnrecordedText,
} from '../src/index.js';
import { assistant, call, observation, user } from './fixtures.js';

const incomplete = (id: string): Message => ({ role: 'tool', toolCallId: id, content: toolCallIncompleteText, isError: true });

describe('repairHistory (SES-7)', () => {
  it('answers only the call that has no Observation and leaves the existing one as it was', () => {
    const existing = observation('c1', 'c1 output');
    const history = [user('go'), assistant('', [call('c1'), call('c2')]), existing];

    const { history: repaired, repaired: calls } = repairHistory(history);

    expect(repaired).toEqual([user('go'), assistant('', [call('c1'), call('c2')]), existing, incomplete('c2')]);
    expect(repaired[2]).toBe(existing);
    expect(calls.map((entry) => [entry.call.id, entry.state, entry.index])).toEqual([['c2', 'incomplete', 3]]);
    expect(history).toHaveLength(3);
  });

  it('inserts before the next user message, not at the end', () => {
    const history = [user('go'), assistant('', [call('c1')]), user('next sentence')];

    expect(repairHistory(history).history).toEqual([
      user('go'),
      assistant('', [call('c1')]),
      incomplete('c1'),
      user('next sentence'),
    ]);
  });

  it('keeps call order for two missing calls, after the Observations already there', () => {
    const history = [
      assistant('', [call('c1'), call('c2'), call('c3')]),
      observation('c2'),
      user('next'),
      assistant('done'),
    ];

    expect(repairHistory(history).history).toEqual([
      assistant('', [call('c1'), call('c2'), call('c3')]),
      observation('c2'),
      incomplete('c1'),
      incomplete('c3'),
      user('next'),
      assistant('done'),
    ]);
  });

  it('repairs several turns, each in its own place', () => {
    const history = [
      assistant('', [call('a')]),
      user('one'),
      assistant('', [call('b')]),
      observation('b'),
      assistant('', [call('c')]),
    ];

    const result = repairHistory(history);

    expect(result.history).toEqual([
      assistant('', [call('a')]),
      incomplete('a'),
      user('one'),
      assistant('', [call('b')]),
      observation('b'),
      assistant('', [call('c')]),
      incomplete('c'),
    ]);
    expect(result.repaired.map((entry) => entry.index)).toEqual([1, 6]);
  });

  it('pairs by turn when a provider reuses call ids', () => {
    const history = [
      assistant('', [call('call_0')]),
      observation('call_0'),
      assistant('', [call('call_0')]),
      user('next'),
    ];

    expect(repairHistory(history).history).toEqual([...history.slice(0, 3), incomplete('call_0'), user('next')]);
  });

  it('returns a paired history as the very same array', () => {
    const history = [user('go'), assistant('', [call('c1')]), observation('c1'), assistant('done')];

    const result = repairHistory(history);

    expect(result.history).toBe(history);
    expect(result.repaired).toEqual([]);
  });
});

describe('repairHistory with a tool journal (SES-8)', () => {
  const history = [assistant('', [call('c1', 'read_file'), call('c2', 'bash'), call('c3', 'write_file')])];
  const journal = { started: new Set(['c2', 'c3']), finished: new Set(['c3']) };

  it('tells never started, started with unknown outcome, and finished but unsaved apart', () => {
    const result = repairHistory(history, journal);

    expect(result.history.slice(1).map((message) => message.role === 'tool' && message.content)).toEqual([
      'tool call never started (the previous run was interrupted before it ran)',
      'tool call started, outcome unknown (the process stopped while it ran; check before repeating it)',
      'tool call finished, but its result was not saved (the process stopped before it was recorded; check before repeating it)',
    ]);
    expect(result.repaired.map((entry) => entry.state)).toEqual(['never_started', 'started', 'finished_unrecorded']);
    expect(result.history.slice(1).every((message) => message.role === 'tool' && message.isError === true)).toBe(true);
  });

  it('uses distinct texts, none of them the engine\'s "canceled"', () => {
    const texts = [toolCallIncompleteText, toolCallNeverStartedText, toolCallStartedText, toolCallUnrecordedText];

    expect(new Set(texts).size).toBe(4);
    expect(toolCallIncompleteText).toBe('tool call incomplete (previous run was interrupted)');
    expect(texts.some((text) => text.includes('canceled'))).toBe(false);
  });

  it('treats a finish without a start as never started (the start could not be recorded)', () => {
    const result = repairHistory([assistant('', [call('c1')])], { started: new Set(), finished: new Set(['c1']) });

    expect(result.repaired.map((entry) => entry.state)).toEqual(['never_started']);
  });

  it('describes each repaired call on one line for the user', () => {
    expect(describeRepair(repairHistory(history, journal).repaired)).toEqual([
      'read_file c1: never started',
      'bash c2: started, outcome unknown',
      'write_file c3: finished, result not saved',
    ]);
    expect(describeRepair(repairHistory(history).repaired)).toEqual([
      'read_file c1: incomplete (previous run was interrupted)',
      'bash c2: incomplete (previous run was interrupted)',
      'write_file c3: incomplete (previous run was interrupted)',
    ]);
  });
});
