import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EvalCase, EvalCaseInput, HarnessFaults, ScorerName } from '../src/case.js';
import { defineCase } from '../src/case.js';
import { emptyRunRecord } from '../src/harness.js';
import { loadCases } from '../src/load-cases.js';
import type { RunRecord } from '../src/run-record.js';
import type { Scorer } from '../src/scorers/index.js';
import { runSuite, type CaseResult } from '../src/suite.js';

export const evalRoot = path.resolve(import.meta.dirname, '..');
export const casesDir = path.join(evalRoot, 'cases');

let loaded: Promise<EvalCase[]> | undefined;

/** The suite's cases (loaded once per test file). */
export function suiteCases(): Promise<EvalCase[]> {
  loaded ??= loadCases(casesDir);
  return loaded;
}

/** One case of the suite by id. */
export async function suiteCase(id: string): Promise<EvalCase> {
  const found = (await suiteCases()).find((evalCase) => evalCase.id === id);
  if (found === undefined) throw new Error(`no case ${id}`);
  return found;
}

/** A case of the suite with some fields replaced (validated again by defineCase). */
export async function variant(id: string, changes: Partial<EvalCaseInput>): Promise<EvalCase> {
  const { kind: _kind, ...input } = await suiteCase(id);
  return defineCase({ ...input, ...changes });
}

/** Runs one case through the real engine and scores it. */
export async function runOne(
  evalCase: EvalCase,
  options: { faults?: HarnessFaults; scorers?: Partial<Record<ScorerName, Scorer>>; repeat?: number } = {},
): Promise<CaseResult> {
  const suite = await runSuite([evalCase], options);
  const result = suite.cases[0];
  if (result === undefined) throw new Error('the suite ran no case');
  return result;
}

const folders = new Set<string>();

/** A temporary folder, removed by `removeTempFolders`. */
export async function tempFolder(prefix = 'claw-eval-test-'): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), prefix));
  folders.add(folder);
  return folder;
}

export async function removeTempFolders(): Promise<void> {
  await Promise.all([...folders].map((folder) => rm(folder, { recursive: true, force: true })));
  folders.clear();
}

/** Every way a page could load something from elsewhere. */
export function externalReferences(html: string): string[] {
  const patterns = [
    /https?:\/\//gi,
    /\b(?:src|href|action|poster|data)\s*=\s*["']?\s*\/\//gi,
    /url\(\s*["']?\s*(?:https?:)?\/\//gi,
    /@import/gi,
    /<link\b/gi,
    /<script\b[^>]*\bsrc\s*=/gi,
    /<img\b/gi,
    /<iframe\b/gi,
  ];
  return patterns.flatMap((pattern) => html.match(pattern) ?? []);
}

/** A completed run of the `unit` case that saw nothing, with `changes`: for scorers' tests. */
export function fakeRun(changes: Partial<RunRecord> = {}): RunRecord {
  return {
    ...emptyRunRecord('unit', 0, 'scripted'),
    status: 'completed',
    finalText: 'done',
    script: [{ text: 'done' }],
    wallMs: 1,
    folders: { root: '/r', workspace: '/r/workspace', outside: '/r/outside' },
    ...changes,
  };
}
