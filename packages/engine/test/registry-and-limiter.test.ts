import { ClawError, defineTool } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry } from '../src/index.js';
import { ActivityClock, ConcurrencyLimiter } from '../src/limiter.js';

const tool = (name: string) =>
  defineTool({ name, description: name, risk: 'safe', schema: z.object({}), execute: async () => name });

describe('ToolRegistry', () => {
  it('keeps registration order and refuses duplicate names', () => {
    const registry = new ToolRegistry([tool('b'), tool('a')]);
    expect(registry.names()).toEqual(['b', 'a']);
    expect(registry.definitions().map((definition) => definition.name)).toEqual(['b', 'a']);
    let caught: unknown;
    try {
      registry.register(tool('a'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClawError);
    expect((caught as ClawError).code).toBe('duplicate_tool');
    expect(registry.unregister('a')).toBe(true);
    expect(registry.get('a')).toBeUndefined();
    expect(registry.size).toBe(1);
  });
});

describe('ConcurrencyLimiter', () => {
  it('runs waiting tasks in order as slots free, and frees a slot when a task fails', async () => {
    const limiter = new ConcurrencyLimiter(1);
    const order: string[] = [];
    let release: () => void = () => undefined;
    const first = limiter.run(
      () => new Promise<void>((resolve) => (release = () => {
        order.push('first');
        resolve();
      })),
    );
    const second = limiter.run(async () => {
      order.push('second');
      throw new Error('x');
    });
    const third = limiter.run(async () => void order.push('third'));
    await Promise.resolve();
    expect(order).toEqual([]);
    release();
    await first;
    await expect(second).rejects.toThrow('x');
    await third;
    expect(order).toEqual(['first', 'second', 'third']);
    expect(() => new ConcurrencyLimiter(0)).toThrow(RangeError);
  });
});

describe('ActivityClock', () => {
  it('counts overlapping activity once', () => {
    let time = 0;
    const clock = new ActivityClock({ now: () => time });
    clock.begin(); // a starts at 0
    time = 10;
    clock.begin(); // b starts at 10
    time = 30;
    clock.end(); // a ends at 30
    expect(clock.elapsed()).toBe(30);
    time = 50;
    clock.end(); // b ends at 50
    time = 100; // idle
    clock.begin();
    time = 105;
    clock.end();
    expect(clock.elapsed()).toBe(55);
  });
});

describe('ActivityClock with a budget', () => {
  it('runs the injected timer only while an activity does, for what is left, and fires once', () => {
    let time = 0;
    const timers: Array<{ ms: number; fire: () => void; canceled: boolean }> = [];
    const setTimer = (fire: () => void, ms: number) => {
      const timer = { ms, fire, canceled: false };
      timers.push(timer);
      return () => void (timer.canceled = true);
    };
    let exhausted = 0;
    const clock = new ActivityClock({
      now: () => time,
      setTimer,
      budget: { limitMs: 100, onExhausted: () => void (exhausted += 1) },
    });
    clock.begin();
    expect(timers.map((timer) => timer.ms)).toEqual([100]);
    time = 30;
    clock.end();
    expect(timers[0]?.canceled).toBe(true);
    time = 500; // idle: does not count
    clock.begin();
    expect(timers[1]?.ms).toBe(70);
    expect(clock.exhausted).toBe(false);
    time = 570;
    timers[1]?.fire();
    expect(exhausted).toBe(1);
    expect(clock.exhausted).toBe(true);
    clock.end();
    // Exhausted once and for all: no new timer.
    clock.begin();
    expect(timers).toHaveLength(2);
    clock.end();
    expect(clock.elapsed()).toBe(100);
  });
});
