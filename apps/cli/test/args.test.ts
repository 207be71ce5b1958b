import { isUserError, type ClawUserError } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../src/args.js';

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    // A user's error with code usage: what makes claw exit 2 (the settings' flags are read by
    // @claw/runtime, the rest by the CLI).
    expect(isUserError(error)).toBe(true);
    expect((error as ClawUserError).code).toBe('usage');
    return (error as ClawUserError).message;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

describe('parseCommandLine (CLI-6)', () => {
  it('no arguments: the REPL with the defaults', () => {
    expect(parseCommandLine([])).toEqual({
      kind: 'repl',
      options: {
        workdir: undefined, sessionId: 'default', output: 'text', approval: undefined, overrides: {}, verbose: false,
      },
    });
  });

  it('-p with every option: the settings become overrides', () => {
    const command = parseCommandLine([
      '-p', 'fix it', '--workdir', 'proj', '--session', 'work', '--output', 'stream-json', '--approval', 'allow',
      '--model', 'm1', '--max-turns', '5', '--max-session-tokens', '0', '--max-run-tokens', '100',
      '--max-subagents', '2', '--tool-time-budget-ms', '1000', '--call-timeout-ms', '2000',
      '--first-token-timeout-ms', '300', '--stream-idle-timeout-ms', '400', '--retries', '4',
      '--system-prompt-file', 'prompt.md', '--append-system-prompt', 'Be brief.', '--verbose',
    ]);
    expect(command).toEqual({
      kind: 'prompt',
      prompt: 'fix it',
      options: {
        workdir: 'proj',
        sessionId: 'work',
        output: 'stream-json',
        approval: 'allow',
        overrides: {
          approval: 'allow', model: 'm1', maxTurns: 5, maxSessionTokens: 0, maxRunTokens: 100, maxSubagents: 2,
          toolTimeBudgetMs: 1000, callTimeoutMs: 2000, firstTokenTimeoutMs: 300, streamIdleTimeoutMs: 400,
          retries: 4, systemPromptFile: 'prompt.md', appendSystemPrompt: 'Be brief.',
        },
        verbose: true,
      },
    });
    expect(parseCommandLine(['--prompt=hello'])).toMatchObject({ kind: 'prompt', prompt: 'hello' });
  });

  it('demo, --help and --version', () => {
    expect(parseCommandLine(['demo', '--approval', 'allow'])).toMatchObject({ kind: 'demo', options: { approval: 'allow' } });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['-h'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['--version'])).toEqual({ kind: 'version' });
  });

  it('bad input is a usage error that says what is wrong and what to do', () => {
    expect(usageError(['--nope'])).toBe('unknown option --nope; run `claw --help` to see the options');
    expect(usageError(['--max-turns', 'ten'])).toMatch(/--max-turns needs a whole number of at least 1, got "ten"/);
    expect(usageError(['--max-turns', '0'])).toMatch(/--max-turns needs a whole number of at least 1/);
    expect(usageError(['--retries', '-1'])).toMatch(/--retries/);
    expect(usageError(['--call-timeout-ms', '1.5'])).toMatch(/--call-timeout-ms needs a whole number \(0 or more\)/);
    expect(usageError(['--output', 'xml'])).toBe('--output must be one of text, stream-json, json, got "xml"; e.g. --output text');
    expect(usageError(['--approval', 'yes'])).toMatch(/--approval must be one of ask, allow, deny, got "yes"/);
    expect(usageError(['--workdir'])).toMatch(/option --workdir needs a value/);
    expect(usageError(['-p', ''])).toMatch(/-p\/--prompt needs the task as text/);
    expect(usageError(['fix', 'it'])).toMatch(/unknown command "fix".*claw -p "fix"/);
    expect(usageError(['demo', '-p', 'x'])).toMatch(/drop -p/);
    expect(usageError(['demo', '--workdir', '.'])).toMatch(/fresh temporary folder/);
    expect(usageError(['--output', 'stream-json'])).toMatch(/stream-json is for one task/);
    expect(usageError(['--output', 'json'])).toMatch(/--output json is for one task/);
    expect(usageError(['--session', '../x'])).toMatch(/--session: .*\.\./);
    expect(usageError(['--help=yes'])).toMatch(/option -h\/--help takes no value/);
  });
});

describe('claw acp (ACP-1)', () => {
  it('takes the setting flags; --help is its own; the options of a task are refused', () => {
    expect(parseCommandLine(['acp'])).toEqual({ kind: 'acp', overrides: {} });
    expect(parseCommandLine(['acp', '--model', 'm1', '--approval', 'allow', '--max-turns', '40']))
      .toEqual({ kind: 'acp', overrides: { model: 'm1', approval: 'allow', maxTurns: 40 } });
    expect(parseCommandLine(['acp', '--help'])).toEqual({ kind: 'acp-help' });
    expect(() => parseCommandLine(['acp', '--workdir', 'x'])).toThrow(/takes no --workdir: the editor chooses/);
    expect(() => parseCommandLine(['acp', 'extra'])).toThrow(/unexpected argument "extra"/);
    // A session named acp-… is a session, not the command.
    expect(parseCommandLine(['-p', 'hi', '--session', 'acp-1'])).toMatchObject({ kind: 'prompt', options: { sessionId: 'acp-1' } });
  });
});
