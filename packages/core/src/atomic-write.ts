/** The few file operations an atomic write needs (structurally met by `fs/promises` wrappers). */
export interface AtomicWriteFileSystem {
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  open(
    path: string,
    flags: 'wx',
    mode: number,
  ): Promise<{ writeFile(data: string, encoding: 'utf8'): Promise<void>; sync(): Promise<void>; close(): Promise<void> }>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

/**
 * Replaces `file` with `text` so that a crash leaves the old content or the new, never half:
 * the text goes to a new temporary file beside it (`writeFlushedTemporary`), and the temporary
 * file is renamed over `file` (the commit point). On failure the temporary file is removed and the
 * error rethrown. The caller's file system does the I/O (core does none itself).
 */
export async function writeFileAtomically(
  fileSystem: AtomicWriteFileSystem,
  file: string,
  text: string,
  options: { mode?: number } = {},
): Promise<void> {
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  await fileSystem.mkdir(slash > 0 ? file.slice(0, slash) : '.', { recursive: true });
  const temporary = await writeFlushedTemporary(fileSystem, file, text, options);
  try {
    await fileSystem.rename(temporary, file);
  } catch (error) {
    await fileSystem.unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * Writes `text` to a new temporary file beside `file` (`<file>.<uuid>.tmp`, created exclusively,
 * mode 0600 unless given), flushed to disk, and returns its path: the first half of an atomic
 * replacement, for a caller that renames it later. On failure it is removed and the error rethrown.
 */
export async function writeFlushedTemporary(
  fileSystem: Pick<AtomicWriteFileSystem, 'open' | 'unlink'>,
  file: string,
  text: string,
  options: { mode?: number } = {},
): Promise<string> {
  const temporary = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    const handle = await fileSystem.open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await fileSystem.unlink(temporary).catch(() => undefined);
    throw error;
  }
  return temporary;
}

/**
 * Writes all of `text` through `write` (a `writeSync` on a file descriptor, say), which may write
 * less than it was given (a full disk, a signal): it is called again for the rest until every
 * byte is written. Throws what `write` throws. Core does no I/O itself: the caller's `write` does.
 */
export function writeAll(
  text: string,
  write: (bytes: Uint8Array, offset: number, length: number) => number,
): void {
  const bytes = new TextEncoder().encode(text);
  for (let offset = 0; offset < bytes.length;) {
    offset += write(bytes, offset, bytes.length - offset);
  }
}
