import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import nodePath from 'node:path';
import type { ApprovalDecision, ApprovalRequest, RiskLevel } from '@claw/core';
import type { ApprovalHandler, ApprovalPrompt } from '../src/index.js';

/** Temp folders made by `tempDir`, removed by `removeTempDirs` (call it in afterEach). */
const made: string[] = [];

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(nodePath.join(tmpdir(), 'claw-approval-'));
  made.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

const defaultRisks: Record<string, RiskLevel> = {
  read_file: 'safe',
  write_file: 'mutating',
  edit_file: 'mutating',
  bash: 'dangerous',
};

/** An approval request for `toolName` with these arguments (an object, or raw JSON text). */
export function callRequest(options: {
  toolName: string;
  args: Record<string, unknown> | string;
  workDir: string;
  sessionId?: string;
  risk?: RiskLevel;
}): ApprovalRequest {
  const raw = typeof options.args === 'string' ? options.args : JSON.stringify(options.args);
  let parsed: unknown;
  try {
    parsed = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  return {
    sessionId: options.sessionId ?? 'session-1',
    workDir: options.workDir,
    toolCall: { id: 'call-1', name: options.toolName, arguments: raw },
    risk: options.risk ?? defaultRisks[options.toolName] ?? 'mutating',
    arguments: parsed,
  };
}

/** A handler that answers from a script and records every prompt it was shown. */
export class RecordingHandler implements ApprovalHandler {
  readonly prompts: ApprovalPrompt[] = [];
  private readonly answers: ApprovalDecision[];

  constructor(answers: ApprovalDecision[] = []) {
    this.answers = [...answers];
  }

  async approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalDecision> {
    signal.throwIfAborted();
    this.prompts.push(prompt);
    const answer = this.answers.shift();
    if (answer === undefined) throw new Error(`no scripted answer for ${prompt.toolName}`);
    return answer;
  }
}

/** A clock the test moves by hand. */
export class ManualClock {
  private current: number;

  constructor(start = '2030-01-01T00:00:00.000Z') {
    this.current = Date.parse(start);
  }

  readonly now = (): Date => new Date(this.current);

  advance(ms: number): void {
    this.current += ms;
  }
}

export function never(): AbortSignal {
  return new AbortController().signal;
}
