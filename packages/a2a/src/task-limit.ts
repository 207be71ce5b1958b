import type { ServerCallContext } from '@a2a-js/sdk/server';

/** How many inbound tasks may run at once by default (TRUST-6). */
export const defaultMaxInboundTasks = 8;

/** One admitted inbound task's place under the limit; given back when the task ends. */
export interface InboundTaskSlot {
  /** The run took the slot over: it gives it back when it ends (see {@link claimInboundSlot}). */
  readonly claimed: boolean;
  /** Gives the place back; later calls do nothing. */
  release(): void;
}

/**
 * The limit on inbound tasks that run at once (TRUST-6), shared by every way a task comes in
 * (JSON-RPC `SendMessage` / `SendStreamingMessage` and the seed's envelope), so that a flood of
 * messages cannot start claw sessions without bound. A request takes a slot before anything is
 * started, or is refused at once.
 */
export class InboundTaskLimit {
  /** The most inbound tasks that run at once. */
  readonly max: number;
  private inUse = 0;

  /** @throws RangeError when `max` is not a whole number of at least 1. Default 8. */
  constructor(max = defaultMaxInboundTasks) {
    if (!Number.isSafeInteger(max) || max < 1) {
      throw new RangeError(`the inbound task limit must be a whole number of at least 1, got ${max}`);
    }
    this.max = max;
  }

  /** How many slots are taken now. */
  get running(): number {
    return this.inUse;
  }

  /** A slot, or `undefined` when all {@link max} are taken (the caller refuses the task). */
  tryAcquire(): InboundTaskSlot | undefined {
    if (this.inUse >= this.max) return undefined;
    this.inUse += 1;
    return new Slot(() => {
      this.inUse -= 1;
    });
  }

  /** What a refused request is told. */
  refusal(): string {
    return `the server is running its maximum of ${this.max} inbound ` +
      `task${this.max === 1 ? '' : 's'}: try again when one of them finishes`;
  }
}

// The request handler and the executor meet only through the SDK's call context (the same
// object reaches `RequestContext.context`), so the slot travels in its state bag.
const slotKey = 'claw.inboundTaskSlot';

/** Puts the request's slot where the executor finds it ({@link claimInboundSlot}). */
export function attachInboundSlot(context: ServerCallContext, slot: InboundTaskSlot): void {
  context.state.set(slotKey, slot);
}

/**
 * The executor takes the request's slot over (it then gives it back when the run ends), or
 * `undefined` when the request came without one or it was taken already.
 */
export function claimInboundSlot(context: ServerCallContext): InboundTaskSlot | undefined {
  const slot = context.state.get(slotKey);
  return slot instanceof Slot && slot.claim() ? slot : undefined;
}

class Slot implements InboundTaskSlot {
  private state: 'reserved' | 'claimed' | 'released' = 'reserved';
  private readonly onRelease: () => void;

  constructor(onRelease: () => void) {
    this.onRelease = onRelease;
  }

  get claimed(): boolean {
    return this.state === 'claimed';
  }

  /** Whether it was reserved and is now claimed. */
  claim(): boolean {
    if (this.state !== 'reserved') return false;
    this.state = 'claimed';
    return true;
  }

  release(): void {
    if (this.state === 'released') return;
    this.state = 'released';
    this.onRelease();
  }
}
