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
