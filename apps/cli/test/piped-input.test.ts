import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../src/errors.js';
import { maxPipedBytes, pipedWaitNoteMs, promptWithInput } from '../src/piped-input.js';

afterEach(() => {
  vi.useRealTimers();
});

const piped = (...chunks: Array<string | Buffer>) => Readable.from(chunks);
const quiet = { onWait: () => undefined };

describe('promptWithInput (claw -p with stdin)', () => {
  it('puts piped text after the prompt in a <stdin> block; nothing piped, or only blanks, leaves the prompt', async () => {
    expect(await promptWithInput('review this change', piped('diff --git a/x b/x\n', '+new line\n'), { source: 'piped', ...quiet }))
      .toBe('review this change\n\n<stdin>\ndiff --git a/x b/x\n+new line\n</stdin>');
    expect(await promptWithInput('explain', piped('no newline at the end'), { source: 'piped', ...quiet }))
      .toBe('explain\n\n<stdin>\nno newline at the end\n</stdin>');
    expect(await promptWithInput('explain', piped(), { source: 'piped', ...quiet })).toBe('explain');
    expect(await promptWithInput('explain', piped(' \n\n'), { source: 'piped', ...quiet })).toBe('explain');
  });

  it('leaves stdin alone when it is not a pipe or a file (a terminal, /dev/null, a parent\'s socket)', async () => {
    const stdin = new PassThrough();
    // Never ends: reading it would hang.
    expect(await promptWithInput('explain', stdin, { source: 'other', ...quiet })).toBe('explain');
    expect(stdin.readableFlowing).toBe(null);
  });

  it('-p - takes the whole task from stdin, whatever it is; an empty one is a usage error', async () => {
    expect(await promptWithInput('-', piped('explain main.ts\n'), { source: 'other', ...quiet })).toBe('explain main.ts\n');
    expect(await promptWithInput('-', piped('explain main.ts'), { source: 'piped', ...quiet })).toBe('explain main.ts');
    const empty = await promptWithInput('-', piped('\n'), { source: 'piped', ...quiet }).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(UsageError);
    expect((empty as Error).message).toContain('echo "explain main.ts" | claw -p -');
  });

  it('refuses more than 1 MiB, and what is not UTF-8 text, saying what to do', async () => {
    const big = Buffer.alloc(maxPipedBytes + 1, 'a');
    const refusals = await Promise.all([
      promptWithInput('x', piped(big.subarray(0, 1000), big.subarray(1000)), { source: 'piped', ...quiet }),
      promptWithInput('x', piped(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01])), { source: 'piped', ...quiet }),
      promptWithInput('x', piped(Buffer.from([0x66, 0xff, 0x66])), { source: 'piped', ...quiet }),
    ].map((reading) => reading.then(() => new Error('read'), (error: unknown) => error)));
    expect(refusals.every((error) => error instanceof UsageError)).toBe(true);
    expect((refusals[0] as Error).message).toContain('over 1 MiB');
    expect((refusals[1] as Error).message).toContain('not UTF-8 text');
    expect((refusals[2] as Error).message).toContain('not UTF-8 text');
    // Exactly the limit is taken.
    const atLimit = await promptWithInput('-', piped(Buffer.alloc(maxPipedBytes, 'b')), { source: 'piped', ...quiet });
    expect(atLimit).toHaveLength(maxPipedBytes);
  });

  it('says once what it waits for when the pipe stays open for a while, and nothing when it ends soon', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stdin = new PassThrough();
    let notes = 0;
    const reading = promptWithInput('explain', stdin, { source: 'piped', onWait: () => void (notes += 1) });
    stdin.write('part one\n');
    await vi.advanceTimersByTimeAsync(pipedWaitNoteMs - 1);
    expect(notes).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(notes).toBe(1);
    await vi.advanceTimersByTimeAsync(pipedWaitNoteMs * 5);
    stdin.end('part two\n');
    expect(await reading).toBe('explain\n\n<stdin>\npart one\npart two\n</stdin>');
    expect(notes).toBe(1);

    let quick = 0;
    await promptWithInput('explain', piped('soon'), { source: 'piped', onWait: () => void (quick += 1) });
    await vi.advanceTimersByTimeAsync(pipedWaitNoteMs * 2);
    expect(quick).toBe(0);
  });
});
