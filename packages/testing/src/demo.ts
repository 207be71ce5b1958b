import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Message, ModelRequest, ToolCall } from '@claw/core';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';

/** The label the demo prints first: nothing in it comes from a real model. */
export const demoLabel = 'claw demo — scripted demo model — no API key used';

export const demoTask =
  'Read README.md, write NOTES.md saying what the project is and how to run it, mark the ' +
  'notes as checked, then run greet.js to see it work.';

/** The files the scripted model creates or changes (besides what it only reads). */
export const demoWrites = ['NOTES.md'] as const;

const readme = `# greet

A tiny command-line program that greets whoever you name.

Usage: node greet.js <name>
`;

const greetJs = `// Prints a greeting for the name given on the command line.
const name = process.argv[2] ?? 'world';
console.log(\`Hello, \${name}!\`);
`;

/** Makes a fresh temporary workspace with a small seed project (README.md and greet.js). */
export async function createDemoWorkspace(): Promise<string> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'claw-demo-'));
  await writeFile(path.join(workDir, 'README.md'), readme);
  await writeFile(path.join(workDir, 'greet.js'), greetJs);
  return workDir;
}

export interface DemoModelOptions {
  /** Nobody can answer questions (no terminal, or `--approval allow`): explains denials so. */
  unattended: boolean;
  /** Pause between streamed pieces of text, in ms (default 12, so the streaming shows). */
  chunkDelayMs?: number;
  /**
   * Serve any number of tasks (a demo server's sessions), keeping no copy of the requests.
   * Default false: one task's steps, and a call past them fails, like any scripted model.
   */
  endless?: boolean;
}

/**
 * The demo's scripted model: a real task in five steps, each decided from what the previous tool
 * call returned — read README.md, write NOTES.md, edit it (skipped when the write was denied),
 * run `node greet.js claw`, and a summary that says which steps were denied and why.
 */
export function createDemoModel(options: DemoModelOptions): ScriptedProvider {
  const step = (request: ModelRequest): ScriptedReply => nextReply(request, options);
  if (options.endless === true) {
    return new ScriptedProvider([], { name: 'scripted-demo', then: step, record: false });
  }
  return new ScriptedProvider([step, step, step, step, step, step], { name: 'scripted-demo' });
}

interface Outcome {
  call: ToolCall;
  args: Record<string, unknown>;
  content: string;
  isError: boolean;
}

function nextReply(request: ModelRequest, options: DemoModelOptions): ScriptedReply {
  const outcomes = outcomesOfThisTask(request.messages);
  const last = outcomes.at(-1);
  const say = (text: string, toolCall?: { name: string; arguments: Record<string, unknown> }) => ({
    textChunks: text.match(/\S+\s*/g) ?? [text],
    chunkDelayMs: options.chunkDelayMs ?? 12,
    usage: { promptTokens: 0, completionTokens: 0 },
    ...(toolCall === undefined ? {} : { toolCalls: [toolCall] }),
  });
  const run = { name: 'bash', arguments: { command: 'node greet.js claw' } };
  switch (last?.call.name) {
    case undefined:
      return say('First I read the README to see what this project is.', {
        name: 'read_file',
        arguments: { path: 'README.md' },
      });
    case 'read_file':
      return say('Now I write NOTES.md with what I learned.', {
        name: 'write_file',
        arguments: { path: 'NOTES.md', content: notesFrom(last.isError ? readme : last.content) },
      });
    case 'write_file':
      if (last.isError) return say('I could not write NOTES.md, so I skip the edit.', run);
      return say('Next I mark the notes as checked.', {
        name: 'edit_file',
        arguments: {
          path: 'NOTES.md',
          old_string: '- Checked: not yet',
          new_string: '- Checked: reviewed by the claw demo',
        },
      });
    case 'edit_file':
      return say('Finally I run the program to see it work.', run);
    default:
      return say(summary(outcomes, options));
  }
}

/** Tool calls since the last user message, with their Observations. */
function outcomesOfThisTask(messages: readonly Message[]): Outcome[] {
  const start = messages.findLastIndex((message) => message.role === 'user');
  const calls = new Map<string, ToolCall>();
  const outcomes: Outcome[] = [];
  for (const message of messages.slice(start + 1)) {
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? []) calls.set(call.id, call);
    } else if (message.role === 'tool') {
      const call = calls.get(message.toolCallId);
      if (call === undefined) continue;
      outcomes.push({
        call,
        args: parseArgs(call.arguments),
        content: message.content,
        isError: message.isError === true,
      });
    }
  }
  return outcomes;
}

function notesFrom(readmeText: string): string {
  const lines = readmeText.split('\n').map((line) => line.trim());
  const title = lines.find((line) => line.startsWith('# '))?.slice(2) ?? 'the project';
  const what = lines.find((line) => line !== '' && !line.startsWith('#') && !/^usage:/i.test(line));
  const usage = lines.find((line) => /^usage:/i.test(line))?.replace(/^usage:\s*/i, '');
  return (
    `# Notes on ${title}\n\n` +
    `- What it is: ${what ?? 'not described'}\n` +
    `- How to run it: ${usage ?? 'not described'}\n` +
    '- Checked: not yet\n'
  );
}

function summary(outcomes: readonly Outcome[], options: DemoModelOptions): string {
  const lines = outcomes.map((outcome) => `- ${stepName(outcome)}: ${stepResult(outcome, options)}`);
  const denied = outcomes.filter((outcome) => isDenied(outcome.content)).length;
  const failed = outcomes.filter((outcome) => outcome.isError).length - denied;
  const problems = [
    ...(denied === 0 ? [] : [`${count(denied, 'step')} denied by the approval gate`]),
    ...(failed === 0 ? [] : [`${count(failed, 'step')} failed`]),
  ];
  return (
    `Done. Here is what happened:\n${lines.join('\n')}\n` +
    (problems.length === 0 ? 'Every step ran.' : `${problems.join(', ')}; the rest ran.`)
  );
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function isDenied(content: string): boolean {
  return /^Error: permission (denied|could not be obtained)/.test(content);
}

function stepName(outcome: Outcome): string {
  const target = typeof outcome.args.path === 'string' ? outcome.args.path : '';
  switch (outcome.call.name) {
    case 'read_file':
      return `read ${target}`;
    case 'write_file':
      return `write ${target}`;
    case 'edit_file':
      return `edit ${target}`;
    case 'bash':
      return `run \`${typeof outcome.args.command === 'string' ? outcome.args.command : ''}\``;
    default:
      return outcome.call.name;
  }
}

function stepResult(outcome: Outcome, options: DemoModelOptions): string {
  const content = outcome.content;
  if (isDenied(content)) return `denied — ${whyDenied(content, options)}`;
  if (outcome.isError) return `failed — ${firstLine(content.replace(/^Error: /, ''))}`;
  if (outcome.call.name === 'bash') {
    const printed = /--- stdout ---\n([^\n]*)/.exec(content)?.[1];
    return printed === undefined ? 'ok' : `ok, it printed "${printed}"`;
  }
  return 'ok';
}

function whyDenied(content: string, options: DemoModelOptions): string {
  if (/Approval mode is deny/.test(content)) {
    return 'the approval mode is deny, which refuses every call that needs approval (try --approval allow)';
  }
  if (!/the user denied it/.test(content)) {
    return firstLine(content.replace(/^Error: permission denied: /, ''));
  }
  if (!options.unattended) return 'you answered no';
  if (/NOT isolated/.test(content)) {
    return (
      'bash is NOT isolated on this machine (no working bubblewrap), so only a person may ' +
      'allow it, and this unattended run had nobody to ask'
    );
  }
  return 'this run has no terminal to ask on, so calls that need approval are denied';
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
