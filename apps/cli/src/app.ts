import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  RuntimeFactory,
  createFileTracing,
  resolveSettings,
  resolveWorkDir,
  type SettingOverrides,
  type Settings,
} from '@claw/runtime';
import type { Command, RunOptions } from './args.js';
import type { CliIo } from './cli.js';
import { createDemoModel, createDemoWorkspace, demoLabel, demoTask, demoWrites } from '@claw/testing/demo';
import { reportFailure } from './failure.js';
import { tuneJitForTurns } from './jit.js';
import { mcpStartupLine } from './mcp.js';
import { promptWithInput } from './piped-input.js';
import { runOneShot } from './one-shot.js';
import { Output } from './output.js';
import { colourWanted, createStyle, type Style } from './style.js';
import { TerminalSession, createReplInput, type ReplInput } from './terminal-session.js';
import { askTrust, trustNotice } from './trust.js';
import { exitStatus } from './exit-status.js';
import { version } from './version.js';
import { visible } from './terminal-text.js';
import { instructionsLines } from './instructions.js';
import { statusLines } from './status.js';

export { runMcp } from './mcp.js';
export { runSessionList } from './session.js';
export { runTrust } from './trust.js';

/**
 * `claw acp`: the ACP agent (its SDK is loaded only for it: a chunk of its own in dist/).
 */
export async function runAcp(
  command: { overrides: SettingOverrides },
  io: CliIo,
): Promise<number> {
  const { runAcp: serve } = await import('./acp/run.js');
  return serve(command.overrides, io);
}

type RunCommand = Extract<Command, { kind: 'repl' | 'prompt' | 'demo' }>;

interface Streams {
  io: CliIo;
  stdout: Output;
  stderr: Output;
  outStyle: Style;
  errStyle: Style;
}

/**
 * Runs a command that works in a workspace (the REPL, `-p`, `claw demo`) and returns its exit
 * status (CLI-6). Every path that built the runtime factory and the trace writer closes them
 * before returning (traces flushed, OBS-3). `cli.ts` loads this module only for these commands:
 * it is the heavy part of claw (runtime, model client, tracing, sandbox, schemas).
 */
export async function runInWorkspace(command: RunCommand, io: CliIo): Promise<number> {
  const streams: Streams = {
    io,
    stdout: new Output(io.stdout),
    stderr: new Output(io.stderr),
    outStyle: createStyle(colourWanted(io.stdout, io.env)),
    errStyle: createStyle(colourWanted(io.stderr, io.env)),
  };
  try {
    return await runCommand(command, streams);
  } catch (error) {
    return reportFailure(error, streams.stderr, streams.errStyle);
  }
}

async function runCommand(command: RunCommand, streams: Streams): Promise<number> {
  const { io } = streams;
  const { options } = command;
  const demo = command.kind === 'demo';
  const workDir = demo
    ? await createDemoWorkspace()
    : await resolveWorkDir(options.workdir, io.cwd);
  const onTerminal = io.stdin.isTTY === true;
  // What is piped to a single task goes with its prompt, read before anything starts.
  const prompt = command.kind === 'prompt' ? await readPrompt(command.prompt, streams) : undefined;
  const settingsOptions = {
    workDir,
    overrides: options.overrides,
    env: io.env,
    defaultApproval: onTerminal ? 'ask' as const : 'deny' as const,
    cwd: io.cwd,
  };
  let settings = await resolveSettings(settingsOptions);
  // The REPL asks whether to trust the workspace's own settings (TRUST-3), on its reader of stdin
  // (made now, and used by the REPL after); a single task never asks, it says what it left out.
  let replInput: ReplInput | undefined;
  const notice = trustNotice(settings, options.workdir);
  if (notice !== undefined && command.kind === 'repl') {
    replInput = await createReplInput({ input: io.stdin, echo: io.stdout, workDir });
    const answer = await askTrust(settings, replInput.lineInput, notice, streams);
    if (answer === 'interrupt') {
      replInput.lineInput.close();
      return exitStatus.canceled;
    }
    if (answer === 'trusted') settings = await resolveSettings(settingsOptions);
  } else if (notice !== undefined) {
    await streams.stderr.line(streams.errStyle.yellow(`claw: ${notice}`));
  }
  // Questions are asked only where someone can answer: the REPL always reads stdin; a single
  // task asks on a terminal in mode ask, and otherwise nobody is there.
  const unattended = !(onTerminal && settings.approval === 'ask');
  const tracing = createFileTracing({ workDir });
  let factory: RuntimeFactory | undefined;
  try {
    const { stderr, errStyle } = streams;
    factory = new RuntimeFactory({
      settings,
      env: io.env,
      tracer: tracing.tracer,
      ...(demo ? { provider: createDemoModel({ unattended }) } : {}),
      // An MCP server that is skipped, drops or comes back is said on stderr, where it is seen.
      mcp: {
        onWarning: (warning) => {
          stderr.line(errStyle.yellow(`claw: ${visible(warning.message)}`)).catch(() => undefined);
        },
      },
    });
    // How bash runs is probed now, while the session opens: the model's first request says what
    // the probe found (REAL-1), so the probe is on its path (PERF-2).
    factory.isolation().catch(() => undefined);
    if (command.kind === 'repl') {
      const repl = { workDir, settings, spawner: await factory.isolation(), options, replInput };
      return await runRepl(factory, repl, streams);
    }
    const context = { factory, workDir, settings, options, unattended };
    if (prompt !== undefined) return await runPrompt(prompt, context, streams);
    return await runDemo(context, streams);
  } finally {
    replInput?.lineInput.close();
    try {
      await factory?.close();
    } finally {
      // Flushes the batched spans to the trace file before the process exits (OBS-3).
      await tracing.shutdown().catch(() => undefined);
    }
  }
}

/** The prompt of `-p`, with what is piped to claw (see `promptWithInput`). */
function readPrompt(prompt: string, streams: Streams): Promise<string> {
  const { io, stderr, errStyle } = streams;
  return promptWithInput(prompt, io.stdin, {
    source: io.stdinSource ?? 'other',
    onWait: () => {
      const note = io.stdin.isTTY === true
        ? 'claw: reading the task from the terminal (-p -); end it with Ctrl-D on a line of its own'
        : 'claw: reading what is piped to it; the task starts once that ends ' +
          '(give claw < /dev/null to pipe nothing)';
      stderr.line(errStyle.dim(note)).catch(() => undefined);
    },
    onNothing: () => {
      const note = 'claw: nothing came on stdin (a pipe) within 5 s: going on with the prompt ' +
        'alone. To give the task input, pipe it so that it starts sooner, or use -p - ' +
        '(give claw < /dev/null when there is none)';
      stderr.line(errStyle.yellow(note)).catch(() => undefined);
    },
  });
}

type CommandSpawner = Awaited<ReturnType<RuntimeFactory['isolation']>>;

interface RunContext {
  factory: RuntimeFactory;
  workDir: string;
  settings: Settings;
  options: RunOptions;
  unattended: boolean;
}

async function runRepl(
  factory: RuntimeFactory,
  context: Omit<RunContext, 'factory' | 'unattended'> & {
    spawner: CommandSpawner;
    replInput: ReplInput | undefined;
  },
  streams: Streams,
): Promise<number> {
  const { io, stdout, outStyle } = streams;
  const { settings, options } = context;
  await stdout.line(
    `${outStyle.bold(`claw ${version}`)} ${outStyle.dim(
      `— workspace ${context.workDir} · session ${options.sessionId} · model ${settings.model} ` +
      `· approval ${settings.approval}`,
    )}`,
  );
  await stdout.line(isolationLine(context.spawner, outStyle));
  const mcpLine = await mcpStartupLine(factory, context.workDir, outStyle);
  if (mcpLine !== undefined) await stdout.line(mcpLine);
  const session = await TerminalSession.create({
    factory,
    workDir: context.workDir,
    sessionId: options.sessionId,
    input: io.stdin,
    echo: io.stdout,
    output: stdout,
    style: outStyle,
    verbose: options.verbose,
    status: () => statusLines(context, session.runtime, outStyle),
    ...(context.replInput === undefined ? {} : { replInput: context.replInput }),
  });
  for (const line of instructionsLines(session.runtime.instructions, outStyle)) {
    await stdout.line(line);
  }
  await stdout.line(outStyle.dim('Type a task, or /help for the commands.'));
  if (io.tuneJit === true) tuneJitForTurns();
  const release = io.interrupts.handle((signal) => session.interrupt(signal));
  try {
    return await session.run();
  } finally {
    release();
    await session.close();
  }
}

async function runPrompt(prompt: string, context: RunContext, streams: Streams): Promise<number> {
  const { stderr, errStyle } = streams;
  // How bash runs, and which calls nobody can allow, said before the task starts: the session
  // waited for the isolation probe already (the model is told what it found, REAL-1), and a note
  // that came later would land in the middle of the model's output. Where isolation is required
  // and fails, the error ends claw (exit 2) before anything runs.
  const notes = async (): Promise<void> => {
    const spawner = await context.factory.isolation();
    await stderr.line(isolationLine(spawner, errStyle));
    await noteUnattended(context, spawner, streams);
  };
  if (context.settings.sandbox.isolation === 'required') await notes();
  return runOneShot({
    ...oneShotOptions(prompt, context, streams),
    ...(context.settings.sandbox.isolation === 'required' ? {} : { beforeStart: notes }),
  });
}

async function runDemo(context: RunContext, streams: Streams): Promise<number> {
  const json = context.options.output !== 'text';
  const out = json ? streams.stderr : streams.stdout;
  const style = json ? streams.errStyle : streams.outStyle;
  await out.line(style.bold(demoLabel));
  await out.line(
    `workspace: ${context.workDir} ${style.dim('(a fresh folder with README.md and greet.js)')}`,
  );
  await out.line(`task: ${demoTask}`);
  const spawner = await context.factory.isolation();
  await streams.stderr.line(isolationLine(spawner, streams.errStyle));
  await noteUnattended(context, spawner, streams);
  // The demo is a show: in text mode its whole transcript goes to stdout.
  const status = await runOneShot(oneShotOptions(demoTask, context, streams, !json));
  const written = demoWrites.filter((file) => existsSync(path.join(context.workDir, file)));
  await out.line(
    written.length === 0
      ? `the demo wrote no files; the workspace is ${context.workDir}`
      : `the demo wrote: ${written.join(', ')} (in ${context.workDir})`,
  );
  return status;
}

function oneShotOptions(
  prompt: string,
  context: RunContext,
  streams: Streams,
  activityOnStdout = false,
) {
  const { io } = streams;
  return {
    factory: context.factory,
    workDir: context.workDir,
    sessionId: context.options.sessionId,
    prompt,
    format: context.options.output,
    stdout: streams.stdout,
    stderr: streams.stderr,
    activity: activityOnStdout ? streams.stdout : streams.stderr,
    activityStyle: activityOnStdout ? streams.outStyle : streams.errStyle,
    echo: io.stderr,
    style: streams.errStyle,
    terminalInput: context.unattended ? undefined : io.stdin,
    mode: context.settings.approval,
    interrupts: io.interrupts,
    tuneJit: io.tuneJit === true,
    verbose: context.options.verbose,
  };
}

/** Says, before a single task, which calls will be denied because nobody can answer. */
async function noteUnattended(
  context: RunContext,
  spawner: CommandSpawner,
  streams: Streams,
): Promise<void> {
  if (!context.unattended) return;
  const { stderr, errStyle } = streams;
  const mode = context.settings.approval;
  let text: string | undefined;
  if (mode === 'ask') {
    text =
      'no terminal to ask on: calls that need approval will be denied ' +
      '(use --approval allow to allow them)';
  } else if (mode === 'deny' && context.options.approval === undefined) {
    text =
      'approval mode is deny: calls that need approval will be refused (use --approval allow ' +
      'to allow them, or --approval ask on a terminal to be asked)';
  } else if (mode === 'allow' && spawner.mode !== 'bubblewrap') {
    text =
      '--approval allow does not cover bash here: bash is NOT isolated, so only a person may ' +
      'allow it, and nobody is asked in this run; bash calls will be denied';
  }
  if (text !== undefined) await stderr.line(errStyle.yellow(`claw: ${text}`));
}

/** The line that says how bash runs: plainly a warning when it is not isolated (SBX-4). */
function isolationLine(spawner: CommandSpawner, style: Style): string {
  if (spawner.mode === 'bubblewrap') return style.dim(spawner.description);
  return style.yellow(
    `warning: ${spawner.description} Every bash call needs a person's approval.`,
  );
}
