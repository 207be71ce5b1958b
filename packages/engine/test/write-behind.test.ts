import { ClawError, type Message } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { AllowAllGate, ScriptedProvider } from '@claw/testing';
import { watchUnhandledRejections } from '@claw/testing/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Engine } from '../src/index.js';
import { WriteBehindSession } from '../src/write-behind.js';
import { blockingTool, expectPaired, recordTool } from './helpers.js';

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/**
 * A session whose changes apply in memory at once (as the stores' do) and whose writes finish
 * only when the test lets them: `release()` settles every write so far, `fail(error)` rejects
 * the next one that is held.
 */
class HeldSession extends MemorySession {
  readonly held: Array<{ what: string; settle: (error?: Error) => void }> = [];

  constructor(readonly applyAtOnce: boolean) {
    super({ id: 'held', workDir: '/virtual/workspace' });
    Object.defineProperty(this, 'changesApplyAtOnce', { value: applyAtOnce });
  }

  override append(...messages: Message[]): Promise<void> {
    void super.append(...messages);
    return this.hold(`append ${messages.map((message) => message.role).join(',')}`);
  }

  toolStarted(): Promise<void> {
    return Promise.resolve();
  }

  toolFinished(id: string): Promise<void> {
    return this.hold(`finished ${id}`);
  }

  /** Writes held so far, by what they store. */
  whats(): string[] {
    return this.held.map((write) => write.what);
  }

  release(): void {
    for (const write of this.held.splice(0)) write.settle();
  }

  /** Settles the held write that stores `what` (with `error`: it fails). */
  settle(what: string, error?: Error): void {
    const index = this.held.findIndex((write) => write.what === what);
    if (index < 0) throw new Error(`no write of ${what} is held; held: ${this.whats().join('; ')}`);
    this.held.splice(index, 1)[0]?.settle(error);
  }

  private hold(what: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.held.push({ what, settle: (error) => (error === undefined ? resolve() : reject(error)) });
    });
  }
}

/** Lets the prompt and then the first reply be stored (a run waits for its prompt once). */
async function storeFirstTurn(session: HeldSession): Promise<void> {
  await until(() => session.whats().includes('append user'));
  session.settle('append user');
  await until(() => session.whats().includes('append assistant'));
  session.settle('append assistant');
}

function twoTurns(): ScriptedProvider {
  return new ScriptedProvider([
    { toolCalls: [{ id: 'one', name: 'record', arguments: { text: 'one' } }] },
    { toolCalls: [{ id: 'two', name: 'record', arguments: { text: 'two' } }] },
    { text: 'done' },
  ]);
}

describe('session writes behind the run (PERF-1)', () => {
  let unhandled: ReturnType<typeof watchUnhandledRejections>;
  beforeEach(() => {
    unhandled = watchUnhandledRejections();
  });
  afterEach(async () => {
    expect(await unhandled.stop()).toEqual([]);
  });

  it('calls the model again while the Observations are still being stored, and returns only once all is stored', async () => {
    const session = new HeldSession(true);
    const provider = twoTurns();
    const effects: string[] = [];
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] });
    let returned = false;
    const run = engine.run('go', { session }).then((result) => {
      returned = true;
      return result;
    });

    // The prompt is stored before the model is asked.
    await until(() => session.held.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(session.whats()).toEqual(['append user']);
    expect(provider.calls).toHaveLength(0);
    session.release();
    // A tool starts only once every earlier write is stored.
    await until(() => session.held.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(effects).toEqual([]);
    expect(session.whats()).toEqual(['append assistant']);
    session.release();
    // The second model call went out with the first wave's results, none of them stored yet.
    await until(() => provider.calls.length >= 2);
    expect(session.whats()).toEqual(
      expect.arrayContaining(['finished one', 'append tool']),
    );
    // Before the next tool runs, every earlier write must be stored: tool two waits.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(effects).toEqual(['one']);
    session.release();
    await until(() => effects.length === 2);
    await until(() => session.held.length > 0 && provider.calls.length === 3);
    // The run has its answer but waits for its last writes.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(returned).toBe(false);
    session.release();
    const result = await run;
    expect(result.status).toBe('completed');
    expect(session.held).toEqual([]);
    expectPaired(session.history());
  });

  it('waits for each write of a session whose changes do not apply at once, as before', async () => {
    const session = new HeldSession(false);
    const provider = twoTurns();
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])] });
    const run = engine.run('go', { session });
    await until(() => session.held.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Held at the user's message: nothing else happened.
    expect(session.held.map((write) => write.what)).toEqual(['append user']);
    expect(provider.calls).toHaveLength(0);
    for (;;) {
      session.release();
      if (await Promise.race([run.then(() => true), new Promise((r) => setTimeout(() => r(false), 5))])) break;
    }
    expect((await run).status).toBe('completed');
  });

  it('a write that fails behind the run stops the next tool before it starts, and the run fails with it', async () => {
    const session = new HeldSession(true);
    const provider = twoTurns();
    const effects: string[] = [];
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool(effects)] });
    const run = engine.run('go', { session });
    await storeFirstTurn(session);
    await until(() => provider.calls.length >= 2);
    // The first wave's Observations fail to be stored, after the run went on.
    session.settle('append tool', new Error('disk full'));
    const release = setInterval(() => session.release(), 1);
    const result = await run.finally(() => clearInterval(release));
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(ClawError);
    expect(result.error?.code).toBe('session_write_failed');
    expect(result.error?.message).toMatch(/could not store a change: disk full/);
    // Tool two never ran; its call has an Observation all the same.
    expect(effects).toEqual(['one']);
    expectPaired(session.history());
  });

  it('a failed end of a tool call stops its wave at once: the sibling still running is aborted', async () => {
    const session = new HeldSession(true);
    const provider = new ScriptedProvider([
      {
        toolCalls: [
          { id: 'fast', name: 'record', arguments: { text: 'fast' } },
          { id: 'slow', name: 'block', arguments: { label: 'slow' } },
        ],
      },
      { text: 'never asked' },
    ]);
    const log: string[] = [];
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([]), blockingTool(log)] });
    const run = engine.run('go', { session });
    await storeFirstTurn(session);
    await until(() => session.whats().includes('finished fast'));
    session.settle('finished fast', new Error('disk full'));
    await until(() => log.includes('aborted slow'));
    const release = setInterval(() => session.release(), 1);
    const result = await run.finally(() => clearInterval(release));
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('tool_journal_failed');
    expect(result.error?.message).toMatch(/could not record the end of tool call fast \(record\).*disk full/);
    expect(provider.calls).toHaveLength(1);
    expectPaired(session.history());
  });

  it('a change the session refuses at once stops the run before the next model call', async () => {
    const session = new HeldSession(true);
    const refused = new ClawError('the session was deleted', { code: 'session_deleted' });
    // Observations are refused (nothing changes in memory): the next request would lack them.
    session.append = (...messages: Message[]) =>
      messages[0]?.role === 'tool' ? Promise.reject(refused) : MemorySession.prototype.append.apply(session, messages);
    const provider = twoTurns();
    const engine = new Engine({ provider, gate: new AllowAllGate(), tools: [recordTool([])] });
    const release = setInterval(() => session.release(), 1);
    const result = await engine.run('go', { session }).finally(() => clearInterval(release));
    expect(result.status).toBe('failed');
    expect(result.error?.code).toBe('session_deleted');
    expect(provider.calls).toHaveLength(1);
  });

  it('a write that fails after the last reply fails the run', async () => {
    const session = new HeldSession(true);
    const provider = new ScriptedProvider([{ text: 'hello' }]);
    const engine = new Engine({ provider, gate: new AllowAllGate() });
    const run = engine.run('go', { session });
    await until(() => session.whats().includes('append user'));
    session.settle('append user');
    await until(() => session.whats().includes('append assistant'));
    session.settle('append assistant', new Error('disk full'));
    const result = await run;
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/disk full/);
  });
});

describe('WriteBehindSession.settle', () => {
  const flushed = () => new Promise((resolve) => setTimeout(resolve, 1));

  it('callers asking while writes are under way share one wait, which ends once every write, one made meanwhile included, is stored', async () => {
    const session = new HeldSession(true);
    const behind = new WriteBehindSession(session);
    await behind.append({ role: 'user', content: 'a' });
    const first = behind.settle();
    await behind.append({ role: 'assistant', content: 'b' });
    const second = behind.settle();
    expect(second).toBe(first);
    let settled = false;
    void first.then(() => (settled = true));

    session.settle('append user');
    await flushed();
    expect(settled).toBe(false);
    session.settle('append assistant');
    await expect(first).resolves.toBeUndefined();
    // Nothing left: a new ask ends at once, with a wait of its own next time.
    await expect(behind.settle()).resolves.toBeUndefined();
    await behind.append({ role: 'user', content: 'c' });
    const third = behind.settle();
    expect(third).not.toBe(first);
    session.release();
    await expect(third).resolves.toBeUndefined();
  });

  it('a write that fails while callers wait rejects each of them, and every later ask', async () => {
    const session = new HeldSession(true);
    const behind = new WriteBehindSession(session);
    await behind.append({ role: 'user', content: 'a' });
    const waits = [behind.settle(), behind.settle()];
    session.settle('append user', new Error('disk full'));
    for (const wait of waits) await expect(wait).rejects.toThrow(/disk full/);
    await expect(behind.settle()).rejects.toThrow(/disk full/);
    expect(() => behind.throwIfFailed()).toThrow(/disk full/);
  });
});
