import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import packageJson from '../package.json' with { type: 'json' };
import { ClawProcess, baseEnv, cleanUp, removeLater } from './helpers.js';

afterEach(cleanUp);

/** The names CLI-6 makes a contract of. */
const contractNames = [
  '-p, --prompt <text>', 'claw demo', '--version', '--help', '--workdir <dir>', '--session <id>',
  '--output text|stream-json', '--approval ask|allow|deny', '--model <name>', '--max-turns <n>',
  '--max-session-tokens <n>', '--max-run-tokens <n>', '--max-subagents <n>', '--tool-time-budget-ms <n>',
  '--call-timeout-ms <n>', '--first-token-timeout-ms <n>', '--stream-idle-timeout-ms <n>', '--retries <n>',
  '--system-prompt-file <file>', '--append-system-prompt <text>', '--verbose',
  'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL',
];

describe('claw --help, --version, bad options (CLI-6)', () => {
  it('--help lists every CLI-6 option, the environment, the exit statuses and where files live', async () => {
    const result = await ClawProcess.run(['--help']);
    expect(result.status).toBe(0);
    for (const name of contractNames) expect(result.stdout, name).toContain(name);
    for (const status of ['0 ', '1 ', '2 ', '130 ']) expect(result.stdout).toMatch(new RegExp(`^ {2}${status}`, 'm'));
    for (const place of ['config.json', 'sessions/', 'traces/']) expect(result.stdout).toContain(place);
    // Defaults for real tasks (REAL-3), from the runtime's settings.
    expect(result.stdout).toMatch(/--max-turns <n> +model calls per task \(default: 200\)/);
    expect(result.stdout).toMatch(/--max-session-tokens <n> +tokens over the session's life, 0 = unlimited\n +\(default: unlimited\)/);
    expect(result.stdout).toMatch(/--tool-time-budget-ms <n>[^]*?\(default: unlimited\)/);
    expect(result.stdout).toMatch(/--call-timeout-ms <n>[^]*?\(default: none\)/);
    expect(result.stdout).toMatch(/--first-token-timeout-ms <n>[^]*?\(default: 120000\)/);
    expect(result.stdout).toMatch(/--stream-idle-timeout-ms <n>[^]*?\(default: 120000\)/);
    // What the model is told: the instruction files.
    expect(result.stdout).toContain('AGENTS.md');
    expect(result.stdout).toContain('/status');
  });

  it('claw acp --help says how an editor runs it and what is supported', async () => {
    const result = await ClawProcess.run(['acp', '--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^claw \S+ acp — claw as an Agent Client Protocol agent/);
    for (const part of ['"agent_servers"', 'session/load', 'session/request_permission', 'fs/read_text_file', 'elicitation/create', '--approval ask|allow|deny']) {
      expect(result.stdout, part).toContain(part);
    }
    expect((await ClawProcess.run(['--help'])).stdout).toContain('claw acp                        an Agent Client Protocol agent');
  });

  it('--version prints the package version', async () => {
    const result = await ClawProcess.run(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${packageJson.version}\n`);
    // A real release version (changesets), not the placeholder of an unreleased package.
    expect(packageJson.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(packageJson.version).not.toBe('0.0.0');
  });

  it('an unknown option exits 2 and says what to do', async () => {
    const result = await ClawProcess.run(['--frobnicate']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown option --frobnicate');
    expect(result.stderr).toContain('claw --help');
    expect(result.stdout).toBe('');
  });

  it('a value that is not a number exits 2 naming the flag', async () => {
    const result = await ClawProcess.run(['-p', 'hi', '--retries', 'lots']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--retries needs a whole number');
  });
});

describe('claw demo', () => {
  it('--approval allow runs unattended without an API key, exits 0 and leaves the files it says it wrote', async () => {
    const result = await ClawProcess.run(['demo', '--approval', 'allow'], { env: baseEnv() });
    const workDir = /^workspace: (\S+)/m.exec(result.stdout)?.[1];
    if (workDir !== undefined) removeLater(workDir);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('scripted demo model — no API key used');
    expect(workDir).toBeDefined();
    const wrote = /^the demo wrote: (.+) \(in /m.exec(result.stdout)?.[1]?.split(', ') ?? [];
    expect(wrote).toEqual(['NOTES.md']);
    for (const file of wrote) expect(existsSync(path.join(workDir ?? '', file))).toBe(true);
    const notes = await readFile(path.join(workDir ?? '', 'NOTES.md'), 'utf8');
    expect(notes).toContain('- What it is: A tiny command-line program that greets whoever you name.');
    expect(notes).toContain('- Checked: reviewed by the claw demo'); // the edit
    for (const call of ['▸ read_file README.md', '▸ write_file NOTES.md', '▸ edit_file NOTES.md', '▸ bash node greet.js claw']) {
      expect(result.stdout).toContain(call);
    }
    // bash ran isolated, or (no bubblewrap) was denied with the reason said.
    expect(result.stdout).toMatch(/run `node greet\.js claw`: (ok, it printed "Hello, claw!"|denied — bash is NOT isolated)/);
  });
});
