import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineCase, isEvalCase, positiveAssertions, type EvalCaseInput } from '../src/case.js';
import { loadCases, selectCases } from '../src/load-cases.js';
import { removeTempFolders, suiteCase, suiteCases, tempFolder } from './helpers.js';

afterAll(removeTempFolders);

const minimal: EvalCaseInput = {
  id: 'minimal',
  title: 'A minimal case.',
  prompt: 'Say hi.',
  script: [{ text: 'hi' }],
  expect: { outcome: { status: 'completed' } },
};

describe('defineCase', () => {
  it('returns a frozen, tagged case', () => {
    const evalCase = defineCase(minimal);
    expect(isEvalCase(evalCase)).toBe(true);
    expect(evalCase.tags).toEqual([]);
    expect(Object.isFrozen(evalCase)).toBe(true);
  });

  it('says what is wrong with a case, naming it', () => {
    expect(() => defineCase({ ...minimal, id: 'Bad Id' })).toThrow(/case "Bad Id" is invalid: .*use lower-case letters, digits and dashes.*at id/s);
    expect(() => defineCase({ ...minimal, script: [{ text: 'hi', ttfb: 5 } as never] })).toThrow(/case "minimal" is invalid/);
    expect(() => defineCase({ ...minimal, expect: { outcome: { status: 'completed' }, files2: {} } as never }))
      .toThrow('case "minimal" has an unknown expectation "files2"');
    expect(() => defineCase({ ...minimal, expect: { trajectory: { forbidden: ['bash'] }, files: { a: { absent: true } } } }))
      .toThrow(/case "minimal" has no positive assertion/);
    expect(() => defineCase({ ...minimal, script: [{ fault: { type: 'status', status: 429 } }, { text: 'hi' }] }))
      .toThrow(/scripts a failed attempt \(fault\) on the in-process transport/);
  });

  it('counts positive assertions, not negative ones', () => {
    expect(positiveAssertions({ files: { a: { absent: true }, b: { contains: 'x' } }, trajectory: { forbidden: ['x'], subset: ['y'] } }))
      .toEqual(['file b', 'trajectory.subset']);
    expect(positiveAssertions({ files: { a: { unchanged: true } }, trajectory: { forbidden: ['x'] } })).toEqual([]);
  });
});

describe('loading and selecting cases', () => {
  it('loads every case of eval/cases/ with unique ids', async () => {
    const cases = await suiteCases();
    expect(new Set(cases.map((evalCase) => evalCase.id)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(22);
  });

  it('selects by id substring, by pattern and by tags', async () => {
    const cases = await suiteCases();
    expect(selectCases(cases, { filters: ['first-token'] }).map((evalCase) => evalCase.id)).toEqual(['first-token-timeout-fails', 'first-token-timeout']);
    expect(selectCases(cases, { filters: ['canary-*e'] }).map((evalCase) => evalCase.id)).toEqual(['canary-state', 'canary-trace']);
    expect(selectCases(cases, { tags: ['seed', 'boundary'] }).map((evalCase) => evalCase.id)).toEqual(['denied-write']);
    expect(selectCases(cases, { filters: ['nothing-like-this'] })).toEqual([]);
  });

  it('loads a folder of plain case objects and checks them, and refuses broken ones', async () => {
    // Each scenario in a folder of its own: Node keeps a module it has imported once.
    const folderWith = async (files: Record<string, string>): Promise<string> => {
      const folder = await tempFolder();
      for (const [name, text] of Object.entries(files)) await writeFile(path.join(folder, name), text);
      return folder;
    };
    const plain = (id: string, extra: object = {}) => `export default ${JSON.stringify({ ...minimal, id, ...extra })};\n`;
    expect((await loadCases(await folderWith({ 'a.mjs': plain('extra-a') }))).map((evalCase) => evalCase.id)).toEqual(['extra-a']);
    await expect(loadCases(await folderWith({ 'a.mjs': plain('extra-a'), 'b.mjs': plain('extra-a') })))
      .rejects.toThrow('two cases have the id "extra-a"; ids must be unique');
    await expect(loadCases(await folderWith({ 'b.mjs': 'export const notDefault = 1;\n' })))
      .rejects.toThrow(/b\.mjs has no case: its default export must be defineCase/);
    await expect(loadCases(await folderWith({ 'b.mjs': plain('extra-b', { expect: {} }) })))
      .rejects.toThrow('case "extra-b" has no positive assertion');
    await expect(loadCases(path.join(await tempFolder(), 'missing'))).rejects.toThrow(/cannot read the cases folder/);
  });

  it('turns a recorded session into a replayable case on the case it was recorded from', async () => {
    const folder = await tempFolder();
    const base = await suiteCase('task-completed');
    const recording = { format: 'claw-eval-recording', version: 1, case: 'task-completed', model: 'gpt-test', recordedAt: '2026-01-01T00:00:00Z', rounds: base.script };
    await writeFile(path.join(folder, 'task-completed.recorded.json'), JSON.stringify(recording));
    await expect(loadCases(folder)).rejects.toThrow(/was recorded on case "task-completed", which is not in this folder/);
    const [replayed] = await loadCases(folder, { known: [base] });
    expect(replayed?.id).toBe('task-completed-recorded');
    expect(replayed?.tags).toEqual(['seed', 'recorded']);
    expect(replayed?.script).toEqual(base.script);
    await writeFile(path.join(folder, 'task-completed.recorded.json'), JSON.stringify({ ...recording, version: 9 }));
    await expect(loadCases(folder, { known: [base] })).rejects.toThrow(/is not a claw-eval recording/);
  });
});
