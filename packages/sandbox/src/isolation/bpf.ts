import { IsolationError } from './errors.js';

// Classic BPF opcode parts (linux/bpf_common.h). A seccomp filter is a classic BPF program over
// `struct seccomp_data`; only the few forms below are needed.
const classLoad = 0x00;
const classJump = 0x05;
const classReturn = 0x06;
const sizeWord = 0x00;
const modeAbsolute = 0x20;
const sourceConstant = 0x00;

const jumpCodes = {
  always: 0x00, // BPF_JA
  equal: 0x10, // BPF_JEQ
  greater: 0x20, // BPF_JGT
  greaterOrEqual: 0x30, // BPF_JGE
  anyBitSet: 0x40, // BPF_JSET
} as const;

/** The comparisons a conditional jump can make between the accumulator and a constant. */
export type JumpCondition = Exclude<keyof typeof jumpCodes, 'always'>;

/** The size of one `struct sock_filter`: u16 code, u8 jt, u8 jf, u32 k. */
export const instructionSize = 8;

/** The kernel refuses longer programs (BPF_MAXINSNS). */
export const maxInstructions = 4096;

/** One encoded instruction, before it is written out. */
export interface EncodedInstruction {
  code: number;
  jumpIfTrue: number;
  jumpIfFalse: number;
  value: number;
}

/** Writes instructions as the kernel reads them (little-endian: x86_64 and aarch64). */
export function encodeInstructions(instructions: readonly EncodedInstruction[]): Buffer {
  const bytes = Buffer.alloc(instructions.length * instructionSize);
  instructions.forEach((instruction, index) => {
    const at = index * instructionSize;
    bytes.writeUInt16LE(instruction.code, at);
    bytes.writeUInt8(instruction.jumpIfTrue, at + 2);
    bytes.writeUInt8(instruction.jumpIfFalse, at + 3);
    bytes.writeUInt32LE(instruction.value >>> 0, at + 4);
  });
  return bytes;
}

type PendingInstruction =
  | { kind: 'load'; offset: number }
  | { kind: 'return'; value: number }
  | { kind: 'goto'; target: string }
  | {
    kind: 'jump';
    condition: JumpCondition;
    value: number;
    ifTrue: string | undefined;
    ifFalse: string | undefined;
  };

/**
 * A tiny assembler for classic BPF seccomp programs with named labels. Jumps only go forward (the
 * kernel forbids loops); a conditional jump reaches at most 255 instructions ahead. `assemble()`
 * resolves the labels and throws an `IsolationError` (`seccomp_assembly_failed`) for an unknown
 * or repeated label, a backward or too long jump, or a program the kernel would refuse.
 */
export class BpfAssembler {
  private readonly instructions: PendingInstruction[] = [];
  private readonly labels = new Map<string, number>();

  /** Names the position of the next instruction. */
  label(name: string): this {
    if (this.labels.has(name)) fail(`the label "${name}" is defined twice`);
    this.labels.set(name, this.instructions.length);
    return this;
  }

  /** A = the 32-bit word at `offset` of `struct seccomp_data`. */
  load(offset: number): this {
    if (!Number.isInteger(offset) || offset < 0 || offset % 4 !== 0) {
      fail(`cannot load from offset ${offset}: it must be a non-negative multiple of 4`);
    }
    this.instructions.push({ kind: 'load', offset });
    return this;
  }

  /**
   * Jumps to `ifTrue` when the comparison holds, else to `ifFalse`; `undefined` means the next
   * instruction.
   */
  jumpIf(
    condition: JumpCondition,
    value: number,
    ifTrue: string | undefined,
    ifFalse?: string,
  ): this {
    checkWord(value);
    this.instructions.push({ kind: 'jump', condition, value, ifTrue, ifFalse });
    return this;
  }

  /** Jumps to `target` unconditionally. */
  goto(target: string): this {
    this.instructions.push({ kind: 'goto', target });
    return this;
  }

  /** Ends the program with this seccomp action. */
  return(value: number): this {
    checkWord(value);
    this.instructions.push({ kind: 'return', value });
    return this;
  }

  /** Resolves the labels and returns the encoded program. */
  assemble(): Buffer {
    const count = this.instructions.length;
    if (count === 0) fail('the program is empty');
    if (count > maxInstructions) fail(`the program has ${count} instructions (at most ${maxInstructions})`);
    const last = this.instructions[count - 1];
    if (last?.kind !== 'return' && last?.kind !== 'goto') {
      fail('the program does not end with a return');
    }
    for (const [name, position] of this.labels) {
      if (position >= count) fail(`the label "${name}" marks no instruction`);
    }
    return encodeInstructions(this.instructions.map((item, index) => this.encode(item, index)));
  }

  private encode(instruction: PendingInstruction, index: number): EncodedInstruction {
    switch (instruction.kind) {
      case 'load':
        return plain(classLoad | sizeWord | modeAbsolute, instruction.offset);
      case 'return':
        return plain(classReturn | sourceConstant, instruction.value);
      case 'goto':
        return {
          code: classJump | jumpCodes.always,
          jumpIfTrue: 0,
          jumpIfFalse: 0,
          value: this.distance(index, instruction.target, Number.MAX_SAFE_INTEGER),
        };
      case 'jump':
        return {
          code: classJump | jumpCodes[instruction.condition] | sourceConstant,
          jumpIfTrue: this.distance(index, instruction.ifTrue, 255),
          jumpIfFalse: this.distance(index, instruction.ifFalse, 255),
          value: instruction.value,
        };
    }
  }

  /** Instructions to skip from the one after `index` to `target`. */
  private distance(index: number, target: string | undefined, limit: number): number {
    if (target === undefined) return 0;
    const position = this.labels.get(target);
    if (position === undefined) fail(`the label "${target}" is not defined`);
    const skip = position - (index + 1);
    if (skip < 0) fail(`instruction ${index} jumps backwards to "${target}"`);
    if (skip > limit) fail(`instruction ${index} jumps ${skip} instructions to "${target}" (at most ${limit})`);
    return skip;
  }
}

function plain(code: number, value: number): EncodedInstruction {
  return { code, jumpIfTrue: 0, jumpIfFalse: 0, value };
}

function checkWord(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    fail(`${value} is not a 32-bit unsigned value`);
  }
}

function fail(message: string): never {
  throw new IsolationError(`cannot assemble the seccomp filter: ${message}`, {
    code: 'seccomp_assembly_failed',
  });
}
