import { ClawError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { BpfAssembler, encodeInstructions } from '../../src/isolation/bpf.js';
import { IsolationError } from '../../src/index.js';
import { runSeccompProgram } from './helpers.js';

/** Splits a program into [code, jt, jf, k] rows for readable assertions. */
function rows(program: Buffer): number[][] {
  const result: number[][] = [];
  for (let at = 0; at < program.length; at += 8) {
    result.push([
      program.readUInt16LE(at),
      program.readUInt8(at + 2),
      program.readUInt8(at + 3),
      program.readUInt32LE(at + 4),
    ]);
  }
  return result;
}

function assemblyError(build: () => unknown): IsolationError {
  try {
    build();
  } catch (error) {
    if (error instanceof IsolationError) return error;
    throw error;
  }
  throw new Error('expected the assembler to throw');
}

describe('encodeInstructions', () => {
  it('writes struct sock_filter as u16 code, u8 jt, u8 jf, u32 k, little-endian', () => {
    const bytes = encodeInstructions([
      { code: 0x15, jumpIfTrue: 2, jumpIfFalse: 7, value: 0xc000003e },
      { code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, value: 0x7fff0000 },
    ]);
    expect([...bytes]).toEqual([
      0x15, 0x00, 0x02, 0x07, 0x3e, 0x00, 0x00, 0xc0,
      0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x7f,
    ]);
  });
});

describe('BpfAssembler', () => {
  it('encodes load, conditional jumps, goto and return with the kernel opcodes', () => {
    const program = new BpfAssembler()
      .load(4) // ld [4]
      .jumpIf('equal', 0xc000003e, 'x86', 'kill')
      .label('x86')
      .load(0)
      .jumpIf('greater', 10, 'kill')
      .jumpIf('greaterOrEqual', 5, 'deny')
      .jumpIf('anyBitSet', 0x40000000, 'deny')
      .goto('allow')
      .label('kill')
      .return(0x80000000)
      .label('deny')
      .return(0x00050001)
      .label('allow')
      .return(0x7fff0000)
      .assemble();
    expect(rows(program)).toEqual([
      [0x20, 0, 0, 4], // 0: ld [4]
      [0x15, 0, 5, 0xc000003e], // 1: jeq → 2 (x86), else → 7 (kill)
      [0x20, 0, 0, 0], // 2: ld [0]
      [0x25, 3, 0, 10], // 3: jgt → 7 (kill)
      [0x35, 3, 0, 5], // 4: jge → 8 (deny)
      [0x45, 2, 0, 0x40000000], // 5: jset → 8 (deny)
      [0x05, 0, 0, 2], // 6: ja → 9 (allow)
      [0x06, 0, 0, 0x80000000], // 7: kill
      [0x06, 0, 0, 0x00050001], // 8: errno EPERM
      [0x06, 0, 0, 0x7fff0000], // 9: allow
    ]);
    // And the program does what the offsets say.
    expect(runSeccompProgram(program, { nr: 3, arch: 0xc000003e })).toBe(0x7fff0000);
    expect(runSeccompProgram(program, { nr: 7, arch: 0xc000003e })).toBe(0x00050001);
    expect(runSeccompProgram(program, { nr: 11, arch: 0xc000003e })).toBe(0x80000000);
    expect(runSeccompProgram(program, { nr: 3, arch: 0x40000003 })).toBe(0x80000000);
  });

  it('resolves a conditional jump of exactly 255 instructions and refuses 256', () => {
    const build = (filler: number): Buffer => {
      const program = new BpfAssembler().load(0).jumpIf('equal', 1, 'far');
      for (let index = 0; index < filler; index += 1) program.return(0);
      return program.label('far').return(0x7fff0000).assemble();
    };
    expect(rows(build(255))[1]).toEqual([0x15, 255, 0, 1]);
    const error = assemblyError(() => build(256));
    expect(error.code).toBe('seccomp_assembly_failed');
    expect(error.message).toContain('jumps 256 instructions to "far" (at most 255)');
  });

  it('refuses backward jumps, unknown and repeated labels, and programs without a final return', () => {
    expect(assemblyError(() => new BpfAssembler().label('top').load(0).goto('top').assemble()).message)
      .toContain('jumps backwards to "top"');
    expect(assemblyError(() => new BpfAssembler().jumpIf('equal', 1, 'nowhere').return(0).assemble()).message)
      .toContain('the label "nowhere" is not defined');
    expect(assemblyError(() => new BpfAssembler().label('a').label('a')).message)
      .toContain('the label "a" is defined twice');
    expect(assemblyError(() => new BpfAssembler().load(0).assemble()).message)
      .toContain('does not end with a return');
    expect(assemblyError(() => new BpfAssembler().assemble()).message).toContain('the program is empty');
    expect(assemblyError(() => new BpfAssembler().return(0).label('end').assemble()).message)
      .toContain('the label "end" marks no instruction');
  });

  it('refuses values that do not fit 32 bits and misaligned loads', () => {
    expect(assemblyError(() => new BpfAssembler().return(2 ** 32)).message).toContain('not a 32-bit unsigned value');
    expect(assemblyError(() => new BpfAssembler().jumpIf('equal', -1, undefined)).message)
      .toContain('not a 32-bit unsigned value');
    expect(assemblyError(() => new BpfAssembler().load(6)).message).toContain('multiple of 4');
  });

  it('refuses programs longer than the kernel accepts', () => {
    const program = new BpfAssembler();
    for (let index = 0; index < 4097; index += 1) program.return(0);
    const error = assemblyError(() => program.assemble());
    expect(error).toBeInstanceOf(ClawError);
    expect(error.message).toContain('4097 instructions (at most 4096)');
  });
});
