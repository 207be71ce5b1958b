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
 * the text goes to a new temporary file beside it (created exclusively), is flushed to disk, and
 * the temporary file is renamed over `file` (the commit point). On failure the temporary file is
 * removed and the error rethrown. The caller's file system does the I/O (core does none itself).
 */
export async function writeFileAtomically(
  fileSystem: AtomicWriteFileSystem,
  file: string,
  text: string,
  options: { mode?: number } = {},
): Promise<void> {
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  const folder = slash > 0 ? file.slice(0, slash) : '.';
  const temporary = `${file}.${crypto.randomUUID()}.tmp`;
  try {
    await fileSystem.mkdir(folder, { recursive: true });
    const handle = await fileSystem.open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fileSystem.rename(temporary, file);
  } catch (error) {
    await fileSystem.unlink(temporary).catch(() => undefined);
    throw error;
  }
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
