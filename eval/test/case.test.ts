import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defineCase, isEvalCase, positiveAssertions, type EvalCaseInput } from '../src/case.js';
import { loadCases, selectCases } from '../src/load-cases.js';
import { fillRound, roundReasoning, roundSchema } from '../src/script.js';
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

describe('script and case fields for real models (REAL-7)', () => {
  it('a round may stream reasoning and report cached tokens, never more than its prompt tokens', () => {
    const round = { reasoning: ['Let me ', 'look.'], text: 'Done.', usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 80 } };
    expect(roundSchema.parse(round)).toEqual(round);
    expect(roundReasoning(round)).toBe('Let me look.');
    expect(roundReasoning({ text: 'x' })).toBe('');
    expect(roundSchema.safeParse({ text: 'x', usage: { promptTokens: 10, completionTokens: 1, cachedTokens: 11 } }).error?.issues[0]?.message)
      .toBe('cachedTokens are a part of promptTokens: they cannot be more');
    expect(() => defineCase({ ...minimal, script: [{ reasoning: 'one piece' as never }] })).toThrow(/case "minimal" is invalid: .*at script\[0\]\.reasoning/s);
    // Placeholders are filled in reasoning as in text.
    expect(fillRound({ reasoning: ['in {{workspace}}/a'] }, { workspace: '/w', outside: '/o' }).reasoning).toEqual(['in /w/a']);
  });

  it('workdir must be a folder inside the workspace', () => {
    expect(defineCase({ ...minimal, workdir: 'sub' }).workdir).toBe('sub');
    expect(defineCase({ ...minimal, workdir: 'a/b-c' }).workdir).toBe('a/b-c');
    for (const workdir of ['', '../x', 'a/../b', '/abs', './a', 'a//b', 'a\\b', 'C:/x']) {
      expect(() => defineCase({ ...minimal, workdir }), workdir).toThrow(/use a folder inside the workspace/);
    }
  });

  it('takes a model name and price, and the model limits the runtime has', () => {
    const evalCase = defineCase({
      ...minimal,
      userConfig: { 'AGENTS.md': 'mine\n' },
      model: { name: 'acme', price: { inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 2 }, streamIdleTimeoutMs: 0, callTimeoutMs: 0 },
    });
    expect(evalCase.model?.price?.cachedInputPerMillion).toBe(0.5);
    expect(() => defineCase({ ...minimal, model: { price: { inputPerMillion: 1 } as never } })).toThrow(/is invalid/);
    expect(() => defineCase({ ...minimal, model: { callTimeoutMs: -1 } })).toThrow(/is invalid/);
  });

  it('counts the requests and thinking checks that say what the run did as positive', () => {
    expect(positiveAssertions({
      requests: { system: { contains: ['a'], order: ['a', 'b'], absent: ['c'], stable: true }, reasoningNotSent: true },
      thinking: { equals: 'x', fromScript: true, stored: true, notInAnswer: true },
      budget: { costUsd: 0.1 },
    })).toEqual([
      'budget.costUsd',
      'requests.system.contains', 'requests.system.order', 'requests.system.stable', 'requests.reasoningNotSent',
      'thinking.equals', 'thinking.fromScript', 'thinking.stored',
    ]);
    // What must not be there needs evidence: alone it is no positive assertion.
    expect(() => defineCase({ ...minimal, expect: { requests: { system: { absent: ['Bash: '] } }, thinking: { notInAnswer: true } } }))
      .toThrow(/has no positive assertion/);
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
