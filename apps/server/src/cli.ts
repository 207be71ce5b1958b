import { errorMessage, isUserError } from '@claw/core';
import { parseServerArgs } from './args.js';
import { helpText } from './help.js';
import type { ServeIo } from './app.js';

/** What `claw-server` takes from the process: the app edge (`main.ts`) passes the real ones. */
export interface ServerCliIo extends ServeIo {
  argv: readonly string[];
  version: string;
}

/**
 * Runs `claw-server` with the given command line and returns its exit status (CH-12): 0 stopped
 * on request, 1 failed while running, 2 usage or configuration error. The server itself (runtime,
 * sockets, model client) loads only once the command line was read.
 */
export async function runServerCli(io: ServerCliIo): Promise<number> {
  try {
    const command = parseServerArgs(io.argv);
    if (command.kind === 'help') {
      io.out(helpText(io.version).trimEnd());
      return 0;
    }
    if (command.kind === 'version') {
      io.out(io.version);
      return 0;
    }
    const { serve } = await import('./app.js');
    return await serve(command.options, io);
  } catch (error) {
    if (isUserError(error)) {
      io.err(`claw-server: ${error.message}`);
      return 2;
    }
    io.err(`claw-server: ${errorMessage(error)}`);
    return 1;
  }
}
