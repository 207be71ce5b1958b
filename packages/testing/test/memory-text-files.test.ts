import { TextFileNotFoundError, hasErrorCode } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { MemoryTextFiles } from '../src/index.js';

const options = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

describe('MemoryTextFiles', () => {
  it('reads what it holds, keeps what is written, and records every call', async () => {
    const files = new MemoryTextFiles({ files: { '/ws/a.txt': 'unsaved' } });
    expect(files.name).toBe('the editor');
    expect(await files.readTextFile?.('/ws/a.txt', options())).toBe('unsaved');
    await files.writeTextFile?.('/ws/b.txt', 'new', options());
    expect(files.files.get('/ws/b.txt')).toBe('new');
    expect(files.callLog()).toEqual(['readTextFile /ws/a.txt', 'writeTextFile /ws/b.txt']);
    expect(files.calls[1]).toMatchObject({ method: 'writeTextFile', content: 'new' });
  });

  it('rejects a read of a path it does not hold with file_not_found', async () => {
    const files = new MemoryTextFiles({ files: new Map([['/ws/a.txt', 'x']]) });
    const error = await files.readTextFile?.('/ws/missing.txt', options()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TextFileNotFoundError);
    expect(hasErrorCode(error, 'file_not_found')).toBe(true);
  });

  it('leaves out the calls it is not given', () => {
    const readOnly = new MemoryTextFiles({ capabilities: { write: false } });
    expect(readOnly.readTextFile).toBeTypeOf('function');
    expect(readOnly.writeTextFile).toBeUndefined();
    const writeOnly = new MemoryTextFiles({ capabilities: { read: false } });
    expect(writeOnly.readTextFile).toBeUndefined();
    expect(writeOnly.writeTextFile).toBeTypeOf('function');
  });

  it('fails a call when onCall throws, and changes nothing', async () => {
    const files = new MemoryTextFiles({
      onCall: () => {
        throw new Error('the buffer is read-only');
      },
    });
    await expect(files.writeTextFile?.('/ws/a.txt', 'x', options())).rejects.toThrow('read-only');
    expect(files.files.size).toBe(0);
  });

  it('rejects a held call with the signal\'s reason when it aborts, unless told to ignore it', async () => {
    const held = new MemoryTextFiles({ files: { '/ws/a.txt': 'x' }, onCall: () => new Promise(() => undefined) });
    const controller = new AbortController();
    const reading = held.readTextFile?.('/ws/a.txt', { signal: controller.signal });
    controller.abort(new Error('stop'));
    await expect(reading).rejects.toThrow('stop');

    let release = (): void => undefined;
    const deaf = new MemoryTextFiles({
      ignoreSignal: true,
      onCall: () => new Promise<void>((resolve) => {
        release = resolve;
      }),
    });
    const second = new AbortController();
    const writing = deaf.writeTextFile?.('/ws/b.txt', 'late', { signal: second.signal });
    second.abort(new Error('stop'));
    let settled = false;
    void writing?.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    release();
    await writing;
    expect(deaf.files.get('/ws/b.txt')).toBe('late');
  });
});
