import { defineTool, sleep, type Message, type Tool } from '@claw/core';
import { MemorySession } from '@claw/session-store';
import { z } from 'zod';

export function newSession(history: Message[] = []): MemorySession {
  return new MemorySession({ id: 'test-session', workDir: '/virtual/workspace', history });
}

/** A tool that waits `ms` (honouring the signal) and reports which call it was. */
export function waitTool(log: string[] = []): Tool {
  return defineTool({
    name: 'wait',
    description: 'Waits.',
    risk: 'safe',
    schema: z.object({ ms: z.number().int().nonnegative(), label: z.string() }),
    async execute(args, context) {
      log.push(`start ${args.label}`);
      await sleep(args.ms, context.signal);
      log.push(`end ${args.label}`);
      return `waited ${args.ms} ms for ${args.label}`;
    },
  });
}

/** A tool with a visible side effect: it pushes its text into `effects`. */
export function recordTool(effects: string[]): Tool {
  return defineTool({
    name: 'record',
    description: 'Records a text.',
    risk: 'mutating',
    schema: z.object({ text: z.string() }),
    async execute(args) {
      effects.push(args.text);
      return `recorded ${args.text}`;
    },
  });
}

export function throwingTool(): Tool {
  return defineTool({
    name: 'explode',
    description: 'Always fails.',
    risk: 'safe',
    schema: z.object({}),
    async execute() {
      throw new Error('the disk is on fire');
    },
  });
}

/** Asserts every assistant tool call has exactly one Observation, right after its message. */
export function expectPaired(history: readonly Message[]): void {
  for (const [index, message] of history.entries()) {
    if (message.role !== 'assistant' || message.toolCalls === undefined) continue;
    const following = history.slice(index + 1, index + 1 + message.toolCalls.length);
    const ids = following.map((item) => (item.role === 'tool' ? item.toolCallId : `<${item.role}>`));
    if (JSON.stringify(ids) !== JSON.stringify(message.toolCalls.map((call) => call.id))) {
      throw new Error(
        `tool calls at ${index} are not paired: expected ${message.toolCalls.map((call) => call.id).join(',')} got ${ids.join(',')}`,
      );
    }
  }
  for (const [index, message] of history.entries()) {
    if (message.role !== 'tool') continue;
    let owner = index - 1;
    while (owner >= 0 && history[owner]?.role === 'tool') owner -= 1;
    const assistant = history[owner];
    if (assistant?.role !== 'assistant' || !assistant.toolCalls?.some((call) => call.id === message.toolCallId)) {
      throw new Error(`orphan Observation ${message.toolCallId} at ${index}`);
    }
  }
}

/**
 * A tool that runs until its signal aborts, then rejects with the reason. `log` gets
 * `start <label>` and `aborted <label>`; `signals` the signal each call got.
 */
export function blockingTool(log: string[] = [], signals: AbortSignal[] = []): Tool {
  return defineTool({
    name: 'block',
    description: 'Runs until aborted.',
    risk: 'safe',
    schema: z.object({ label: z.string() }),
    async execute(args, context) {
      log.push(`start ${args.label}`);
      signals.push(context.signal);
      await new Promise<never>((_resolve, reject) => {
        const onAbort = (): void => {
          log.push(`aborted ${args.label}`);
          reject(context.signal.reason as Error);
        };
        if (context.signal.aborted) onAbort();
        else context.signal.addEventListener('abort', onAbort, { once: true });
      });
      return 'unreachable';
    },
  });
}

/**
 * Time the test moves by hand: `now` for `EngineOptions.now`, `setTimer` for
 * `EngineOptions.setTimer`. `advance` moves the clock and fires the timers that are due, in order.
 */
export function manualTime(start = 1_000) {
  let time = start;
  const timers: Array<{ at: number; ms: number; callback: () => void; canceled: boolean }> = [];
  return {
    now: (): number => time,
    setTimer: (callback: () => void, ms: number): (() => void) => {
      const timer = { at: time + ms, ms, callback, canceled: false };
      timers.push(timer);
      return () => void (timer.canceled = true);
    },
    advance(ms: number): void {
      const until = time + ms;
      for (;;) {
        const due = timers
          .filter((timer) => !timer.canceled && timer.at <= until)
          .sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        time = due.at;
        due.canceled = true;
        due.callback();
      }
      time = until;
    },
    /** The delays of the timers that are armed and not canceled. */
    armed(): number[] {
      return timers.filter((timer) => !timer.canceled).map((timer) => timer.ms);
    },
  };
}

/** Lets pending promise callbacks (and one turn of the event loop) run. */
export function settleMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Follows `promise`: `state` says whether (and how) it settled yet; `done` resolves with it. */
export function watch<T>(promise: Promise<T>): {
  state: { settled: boolean; value?: T; error?: unknown };
  done: Promise<T>;
} {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  const done = promise.then(
    (value) => {
      Object.assign(state, { settled: true, value });
      return value;
    },
    (error: unknown) => {
      Object.assign(state, { settled: true, error });
      throw error;
    },
  );
  // Handled here too, so a test that only looks at `state` leaves no unhandled rejection.
  done.catch(() => undefined);
  return { state, done };
}
