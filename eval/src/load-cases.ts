import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineCase, isEvalCase, type EvalCase, type EvalCaseInput } from './case.js';
import { EvalError } from './errors.js';
import { recordedCase } from './recorded.js';

const moduleFile = /\.(?:ts|js|mjs)$/;

/**
 * Loads the cases of a folder (EVAL-5): each module (`.ts` under a TypeScript loader, `.js`,
 * `.mjs`) whose default export is a `defineCase` result (or a plain case object, checked by
 * `defineCase` here), and each recorded session
 * (`*.recorded.json`, written by `claw-eval record`) replayed as a case of its own
 * (`<case>-recorded`, built on the case it was recorded from, found in the folder or among
 * `known`). Files are read in name order.
 *
 * @throws EvalError `cases_unreadable` when the folder or a file cannot be read or a module has
 *   no case; `case_duplicate` when two cases share an id; what `defineCase` throws.
 */
export async function loadCases(
  folder: string,
  options: { known?: readonly EvalCase[] } = {},
): Promise<EvalCase[]> {
  let names: string[];
  try {
    names = (await readdir(folder)).sort();
  } catch (error) {
    throw new EvalError(`cannot read the cases folder ${folder}: ${(error as Error).message}`, {
      code: 'cases_unreadable',
      cause: error,
      userError: true,
    });
  }
  const cases: EvalCase[] = [];
  const recorded: string[] = [];
  for (const name of names) {
    if (name.endsWith('.recorded.json')) {
      recorded.push(name);
      continue;
    }
    if (!moduleFile.test(name) || name.endsWith('.d.ts')) continue;
    const file = path.join(folder, name);
    const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
    const value = module.default;
    if (typeof value !== 'object' || value === null) {
      throw new EvalError(
        `${file} has no case: its default export must be defineCase({...}) (or, outside ` +
        'eval/cases/, the plain object you would pass to it)',
        { code: 'cases_unreadable', userError: true },
      );
    }
    // A plain object (a case folder outside the app cannot import defineCase) is checked here.
    cases.push(isEvalCase(value) ? value : defineCase(value as EvalCaseInput));
  }
  for (const name of recorded) {
    const file = path.join(folder, name);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw new EvalError(`cannot read the recorded session ${file}: ${(error as Error).message}`, {
        code: 'cases_unreadable',
        cause: error,
        userError: true,
      });
    }
    cases.push(recordedCase(json, [...(options.known ?? []), ...cases], file));
  }
  return checkUnique(cases);
}

/** @throws EvalError `case_duplicate` when two cases share an id. */
export function checkUnique(cases: readonly EvalCase[]): EvalCase[] {
  const seen = new Set<string>();
  for (const evalCase of cases) {
    if (seen.has(evalCase.id)) {
      throw new EvalError(`two cases have the id "${evalCase.id}"; ids must be unique`, {
        code: 'case_duplicate',
        userError: true,
      });
    }
    seen.add(evalCase.id);
  }
  return [...cases];
}

/**
 * The cases whose id matches one of `filters` (a substring, or a pattern with `*`) and that
 * carry every tag of `tags`; all cases when both are empty.
 */
export function selectCases(
  cases: readonly EvalCase[],
  options: { filters?: readonly string[]; tags?: readonly string[] } = {},
): EvalCase[] {
  const filters = options.filters ?? [];
  const tags = options.tags ?? [];
  const matches = (id: string, filter: string): boolean => {
    if (!filter.includes('*')) return id.includes(filter);
    const pattern = filter.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    return new RegExp(`^${pattern}$`).test(id);
  };
  return cases.filter(
    (evalCase) =>
      (filters.length === 0 || filters.some((filter) => matches(evalCase.id, filter))) &&
      tags.every((tag) => evalCase.tags.includes(tag)),
  );
}
