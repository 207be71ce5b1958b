import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../src/errors.js';
import { maxPipedBytes, pipeFirstDataMs, pipedWaitNoteMs, promptWithInput } from '../src/piped-input.js';

afterEach(() => {
  vi.useRealTimers();
});

const piped = (...chunks: Array<string | Buffer>) => Readable.from(chunks);
const quiet = { onWait: () => undefined, onNothing: () => undefined };
const pipe = { source: 'pipe' as const, ...quiet };

describe('promptWithInput (claw -p with stdin)', () => {
  it('puts piped text after the prompt in a <stdin> block; nothing piped, or only blanks, leaves the prompt', async () => {
    expect(await promptWithInput('review this change', piped('diff --git a/x b/x\n', '+new line\n'), pipe))
      .toBe('review this change\n\n<stdin>\ndiff --git a/x b/x\n+new line\n</stdin>');
    expect(await promptWithInput('explain', piped('no newline at the end'), { ...pipe, source: 'file' }))
      .toBe('explain\n\n<stdin>\nno newline at the end\n</stdin>');
    expect(await promptWithInput('explain', piped(), pipe)).toBe('explain');
    expect(await promptWithInput('explain', piped(' \n\n'), pipe)).toBe('explain');
  });

  it('leaves stdin alone when it is not a pipe or a file (a terminal, /dev/null, a parent\'s socket)', async () => {
    const stdin = new PassThrough();
    // Never ends: reading it would hang.
    expect(await promptWithInput('explain', stdin, { ...quiet, source: 'other' })).toBe('explain');
    expect(stdin.readableFlowing).toBe(null);
  });

  it('-p - takes the whole task from stdin, whatever it is; an empty one is a usage error', async () => {
    expect(await promptWithInput('-', piped('explain main.ts\n'), { ...quiet, source: 'other' })).toBe('explain main.ts\n');
    expect(await promptWithInput('-', piped('explain main.ts'), pipe)).toBe('explain main.ts');
    const empty = await promptWithInput('-', piped('\n'), pipe).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(UsageError);
    expect((empty as Error).message).toContain('echo "explain main.ts" | claw -p -');
  });

  it('refuses more than 1 MiB, and what is not UTF-8 text, saying what to do', async () => {
    const big = Buffer.alloc(maxPipedBytes + 1, 'a');
    const refusals = await Promise.all([
      promptWithInput('x', piped(big.subarray(0, 1000), big.subarray(1000)), pipe),
      promptWithInput('x', piped(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01])), pipe),
      promptWithInput('x', piped(Buffer.from([0x66, 0xff, 0x66])), pipe),
    ].map((reading) => reading.then(() => new Error('read'), (error: unknown) => error)));
    expect(refusals.every((error) => error instanceof UsageError)).toBe(true);
    expect((refusals[0] as Error).message).toContain('over 1 MiB');
    expect((refusals[1] as Error).message).toContain('not UTF-8 text');
    expect((refusals[2] as Error).message).toContain('not UTF-8 text');
    // Exactly the limit is taken.
    const atLimit = await promptWithInput('-', piped(Buffer.alloc(maxPipedBytes, 'b')), pipe);
    expect(atLimit).toHaveLength(maxPipedBytes);
  });

  it('says once what it waits for when piped input keeps coming for a while, and nothing when it ends soon', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stdin = new PassThrough();
    let notes = 0;
    const reading = promptWithInput('explain', stdin, { ...pipe, onWait: () => void (notes += 1) });
    stdin.write('part one\n');
    await vi.advanceTimersByTimeAsync(pipedWaitNoteMs - 1);
    expect(notes).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(notes).toBe(1);
    // It started: the limit of a silent pipe no longer applies.
    await vi.advanceTimersByTimeAsync(pipeFirstDataMs * 5);
    stdin.end('part two\n');
    expect(await reading).toBe('explain\n\n<stdin>\npart one\npart two\n</stdin>');
    expect(notes).toBe(1);

    let quick = 0;
    await promptWithInput('explain', piped('soon'), { ...pipe, onWait: () => void (quick += 1) });
    await vi.advanceTimersByTimeAsync(pipedWaitNoteMs * 2);
    expect(quick).toBe(0);
  });

  it('goes on with the prompt alone when a pipe stays silent for 5 s (a parent holding it open), and says so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stdin = new PassThrough();
    const told: string[] = [];
    const reading = promptWithInput('explain', stdin, {
      source: 'pipe',
      onWait: () => void told.push('wait'),
      onNothing: () => void told.push('nothing'),
    });
    await vi.advanceTimersByTimeAsync(pipeFirstDataMs - 1);
    expect(told).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await reading).toBe('explain');
    expect(told).toEqual(['nothing']);
    expect(stdin.destroyed).toBe(true);

    // A file, and a task taken whole from stdin (-p -), are waited for as long as it takes.
    const whole = new PassThrough();
    const waited = promptWithInput('-', whole, { ...quiet, source: 'pipe' });
    await vi.advanceTimersByTimeAsync(pipeFirstDataMs * 3);
    whole.end('late task');
    expect(await waited).toBe('late task');
  });
});
