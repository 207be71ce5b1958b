import type { ApprovalGate, GateCheckOptions, GateDecision, ToolCall } from '@claw/core';
import { ScriptedProvider } from '@claw/testing';
import { describe, expect, it } from 'vitest';
import { Engine } from '../src/index.js';
import { IntentBatch } from '../src/intent-batch.js';
import { expectPaired, newSession, recordTool } from './helpers.js';

/** Resolves after `rounds` turns of the event loop (as a check that waits for the disk does). */
async function loopTurns(rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A session whose journal groups intents the way the file session does: every `toolStarted` of
 * one turn of the event loop goes into the same batch (one write, one fsync).
 */
function batchingJournal() {
  const session = newSession();
  const batches: string[][] = [];
  let current: string[] | undefined;
  Object.assign(session, {
    toolStarted: async (call: ToolCall) => {
      if (current === undefined) {
        const batch: string[] = [];
        current = batch;
        batches.push(batch);
        setImmediate(() => {
          current = undefined;
        });
      }
      current.push(call.id);
    },
  });
  return { session, batches };
}

/** Allows every call after a different number of event-loop turns: call `c<N>` after N. */
class StaggeredGate implements ApprovalGate {
  readonly asked: string[] = [];
  /** Answers of the calls that wait for a person, by call id. */
  readonly people = new Map<string, () => void>();

  constructor(private readonly askFor: readonly string[] = []) {}

  async check(
    request: { toolCall: ToolCall },
    options: GateCheckOptions,
  ): Promise<GateDecision> {
    const { id } = request.toolCall;
    await loopTurns(Number(id.slice(1)));
    if (this.askFor.includes(id)) {
      options.onAsking?.();
      this.asked.push(id);
      await new Promise<void>((resolve) => this.people.set(id, resolve));
    }
    return { allowed: true };
  }
}

function calls(...ids: string[]) {
  return ids.map((id) => ({ id, name: 'record', arguments: { text: id } }));
}

describe('the intents of a tool wave are recorded together (SES-8, PERF-1)', () => {
  it('calls whose checks end in different turns of the event loop record their intents in one batch', async () => {
    const { session, batches } = batchingJournal();
    const effects: string[] = [];
    const provider = new ScriptedProvider([
      { toolCalls: calls('c1', 'c4', 'c2', 'c7') },
      { text: 'done' },
    ]);
    const result = await new Engine({
      provider,
      gate: new StaggeredGate(),
      tools: [recordTool(effects)],
    }).run('go', { session });

    expect(result.status).toBe('completed');
    // One batch, in the order the checks ended.
    expect(batches).toEqual([['c1', 'c2', 'c4', 'c7']]);
    expect(effects.sort()).toEqual(['c1', 'c2', 'c4', 'c7']);
    expectPaired(session.history());
  });

  it('a call that waits for a person does not hold the others back; its own intent follows alone', async () => {
    const { session, batches } = batchingJournal();
    const effects: string[] = [];
    const gate = new StaggeredGate(['c2']);
    const provider = new ScriptedProvider([{ toolCalls: calls('c1', 'c2', 'c3') }, { text: 'done' }]);
    const running = new Engine({ provider, gate, tools: [recordTool(effects)] }).run('go', {
      session,
    });

    // The person has not answered: the other two ran anyway, recorded together.
    while (effects.length < 2) await loopTurns(1);
    expect(effects.sort()).toEqual(['c1', 'c3']);
    expect(gate.asked).toEqual(['c2']);
    await loopTurns(2);
    gate.people.get('c2')?.();

    const result = await running;
    expect(result.status).toBe('completed');
    expect(batches).toEqual([['c1', 'c3'], ['c2']]);
    expect(effects.sort()).toEqual(['c1', 'c2', 'c3']);
    expectPaired(session.history());
  });

  it('a call that is refused, or whose arguments are wrong, releases the others', async () => {
    const { session, batches } = batchingJournal();
    const effects: string[] = [];
    const gate: ApprovalGate = {
      check: async (request) => {
        await loopTurns(3);
        return request.toolCall.id === 'c2'
          ? { allowed: false, reason: 'no' }
          : { allowed: true };
      },
    };
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          ...calls('c1', 'c2'),
          { id: 'c3', name: 'record', arguments: { wrong: true } },
          ...calls('c4'),
        ],
      },
      { text: 'done' },
    ]);
    const result = await new Engine({ provider, gate, tools: [recordTool(effects)] }).run('go', {
      session,
    });
    expect(result.status).toBe('completed');
    expect(batches).toEqual([['c1', 'c4']]);
    expect(effects.sort()).toEqual(['c1', 'c4']);
    expectPaired(session.history());
  });
});

describe('IntentBatch', () => {
  it('releases the waiting calls, in order, once no call is being checked', async () => {
    const batch = new IntentBatch();
    const released: string[] = [];
    batch.enter();
    batch.enter();
    batch.enter();
    void batch.ready().then(() => released.push('a'));
    batch.leave(); // refused
    await loopTurns(1);
    expect(released).toEqual([]);
    batch.leave(); // waits for a person
    await loopTurns(1);
    expect(released).toEqual(['a']);
    void batch.ready(false).then(() => released.push('person'));
    await loopTurns(1);
    expect(released).toEqual(['a', 'person']);
  });
});
