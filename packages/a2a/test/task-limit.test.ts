// The limit on inbound A2A tasks at once (TRUST-6): slots taken at admission, refused beyond the
// maximum, handed from the request to the run through the SDK's call context.
import { ServerCallContext } from '@a2a-js/sdk/server';
import { describe, expect, it } from 'vitest';
import { attachInboundSlot, claimInboundSlot, InboundTaskLimit } from '../src/task-limit.js';

describe('InboundTaskLimit', () => {
  it('gives at most max slots (8 by default); a slot given back makes room for one more', () => {
    const limit = new InboundTaskLimit();
    const slots = Array.from({ length: 8 }, () => limit.tryAcquire());
    expect(slots.every((slot) => slot !== undefined)).toBe(true);
    expect(limit.tryAcquire()).toBeUndefined();
    expect(limit.running).toBe(8);
    slots[0]?.release();
    slots[0]?.release();
    expect(limit.running).toBe(7);
    expect(limit.tryAcquire()).toBeDefined();
    expect(limit.tryAcquire()).toBeUndefined();
  });

  it('says what happened and what to do', () => {
    expect(new InboundTaskLimit(8).refusal()).toBe(
      'the server is running its maximum of 8 inbound tasks: try again when one of them finishes',
    );
    expect(new InboundTaskLimit(1).refusal()).toBe(
      'the server is running its maximum of 1 inbound task: try again when one of them finishes',
    );
  });

  it('refuses a maximum below 1', () => {
    expect(() => new InboundTaskLimit(0)).toThrow(RangeError);
    expect(() => new InboundTaskLimit(1.5)).toThrow(RangeError);
  });

  it('hands a request\'s slot to the run once, through the call context', () => {
    const limit = new InboundTaskLimit(2);
    const context = new ServerCallContext();
    expect(claimInboundSlot(context)).toBeUndefined();
    const slot = limit.tryAcquire();
    if (slot === undefined) throw new Error('expected a slot');
    attachInboundSlot(context, slot);
    expect(slot.claimed).toBe(false);
    expect(claimInboundSlot(context)).toBe(slot);
    expect(slot.claimed).toBe(true);
    expect(claimInboundSlot(context)).toBeUndefined();
    slot.release();
    expect(limit.running).toBe(0);
  });
});
