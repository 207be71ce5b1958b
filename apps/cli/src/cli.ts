import { parseCommandLine, type Command } from './args.js';
import { exitStatus } from './exit-status.js';
import { reportFailure } from './failure.js';
import { acpHelpText, helpText } from './help.js';
import type { Interrupts } from './interrupts.js';
import type { InputStream } from './line-input.js';
import type { StdinSource } from './piped-input.js';
import { Output, type OutputStream } from './output.js';
import { colourWanted, createStyle } from './style.js';
import { version } from './version.js';

/** Everything `claw` takes from the process: the app edge (`main.ts`) passes the real ones. */
export interface CliIo {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  stdin: InputStream;
  /** What stdin is: a `pipe` or a `file` gives `claw -p` its text. Default: `other`. */
  stdinSource?: StdinSource;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Where SIGINT and SIGTERM arrive. */
  interrupts: Interrupts;
  /**
   * Ready V8 for a task's turns once its runtime is up (`tuneJitForTurns`, jit.ts). The app edge
   * sets it; tests that run the CLI in their own process leave it out, so their V8 is not changed.
   */
  tuneJit?: boolean;
}

/**
 * Runs `claw` with the given command line and returns its exit status (CLI-6): 0 completed,
 * 1 failed, 2 usage or configuration error, 130 canceled by Ctrl-C.
 *
 * This module and what it imports stay light (PERF-2): `--version`, `--help` and a usage error
 * are answered without loading the runtime. The commands that do work load `app.ts` (the model
 * client, tracing, the sandbox, the schemas) only once the command line has been read.
 */
export async function runCli(io: CliIo): Promise<number> {
  let command: Command;
  try {
    command = parseCommandLine(io.argv);
    switch (command.kind) {
      case 'help':
        await new Output(io.stdout).write(helpText(version));
        return exitStatus.completed;
      case 'version':
        await new Output(io.stdout).line(version);
        return exitStatus.completed;
      case 'acp-help':
        await new Output(io.stdout).write(acpHelpText(version));
        return exitStatus.completed;
      case 'repl':
      case 'prompt':
      case 'demo':
      case 'mcp':
      case 'sessions':
      case 'trust':
      case 'acp':
        break;
    }
  } catch (error) {
    const style = createStyle(colourWanted(io.stderr, io.env));
    return reportFailure(error, new Output(io.stderr), style);
  }
  // A bundle of its own in dist/ (see tsup.config.ts): it gets the parsed command, plain data.
  const { runAcp, runInWorkspace, runMcp, runSessionList, runTrust } = await import('./app.js');
  if (command.kind === 'acp') return runAcp(command, io);
  if (command.kind === 'trust') return runTrust(command, io);
  if (command.kind === 'mcp') return runMcp(command, io);
  if (command.kind === 'sessions') return runSessionList(command, io);
  return runInWorkspace(command, io);
}
