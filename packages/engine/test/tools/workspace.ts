import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClawError, type ToolContext, type ToolResult } from '@claw/core';
import { expect } from 'vitest';

/**
 * A temporary folder holding a workspace (`root/ws`) next to a sibling folder outside it
 * (`root/outside`), so escape tests can check that nothing lands outside.
 */
export interface TempWorkspace {
  root: string;
  workDir: string;
  outside: string;
  context(signal?: AbortSignal): ToolContext;
  remove(): Promise<void>;
}

export async function createTempWorkspace(): Promise<TempWorkspace> {
  const root = await mkdtemp(join(tmpdir(), 'claw-tools-'));
  const workDir = join(root, 'ws');
  const outside = join(root, 'outside');
  await mkdir(workDir);
  await mkdir(outside);
  return {
    root,
    workDir,
    outside,
    context: (signal = new AbortController().signal) => ({ signal, workDir }),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

/** The ClawError a tool call was refused with; fails the test when the call succeeded. */
export async function refusal(promise: Promise<ToolResult>): Promise<ClawError> {
  const outcome = await promise.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`not refused: ${outcome.result.content.slice(0, 200)}`);
  expect(outcome.error).toBeInstanceOf(ClawError);
  return outcome.error as ClawError;
}
