#!/usr/bin/env node
// The pinned public API (DIST-4, DIST-5). For every entry point of every library package
// (`packages/*`, each key of its exports map), API Extractor reads the built declaration file
// (`dist/*.d.ts`) and writes an API report: every exported name with its signature. The reports
// are committed (`packages/<name>/api/*.api.md`), so a change to the public surface shows in the
// diff. `node scripts/api-report.mjs` fails when a build's surface differs from its committed
// report, or when a top-level export of @claw/engine, @claw/runtime or @claw/channel has no doc
// comment; `--update` rewrites the reports. Build the packages first (`pnpm api:check` and
// `pnpm api:update` do). tools/test/api-report.test.ts runs the same check in the test suite.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const baseConfigFile = path.join(root, 'api-extractor.base.json');

/** Packages whose every top-level export needs a doc comment (DIST-5). */
export const documentedPackages = ['@claw/engine', '@claw/runtime', '@claw/channel'];

export const updateCommand = 'pnpm api:update';

/**
 * Every entry point of every library package: its package, its subpath, the declaration file the
 * build emits for it and the committed report that pins it.
 */
export function apiEntryPoints() {
  const entries = [];
  for (const dir of readdirSync(path.join(root, 'packages')).sort()) {
    const packageFolder = path.join(root, 'packages', dir);
    const manifestFile = path.join(packageFolder, 'package.json');
    if (!existsSync(manifestFile)) continue;
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (manifest.private === true || typeof manifest.exports !== 'object') continue;
    for (const [subpath, target] of Object.entries(manifest.exports)) {
      if (subpath === './package.json' || typeof target?.types !== 'string') continue;
      const suffix = subpath === '.' ? '' : `-${subpath.slice(2).replaceAll('/', '-')}`;
      const reportName = `${dir}${suffix}`;
      entries.push({
        packageName: manifest.name,
        subpath,
        importName: subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`,
        packageFolder,
        dtsFile: path.join(packageFolder, target.types),
        reportName,
        reportFile: path.join(packageFolder, 'api', `${reportName}.api.md`),
      });
    }
  }
  return entries;
}

function extractorConfig(entry, dtsFile, reportFolder) {
  const configObject = ExtractorConfig.loadFile(baseConfigFile);
  configObject.projectFolder = entry.packageFolder;
  configObject.mainEntryPointFilePath = dtsFile;
  configObject.apiReport = {
    ...configObject.apiReport,
    reportFileName: entry.reportName,
    reportFolder,
    reportTempFolder: reportFolder,
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: baseConfigFile,
    packageJsonFullPath: path.join(entry.packageFolder, 'package.json'),
  });
}

/**
 * One TypeScript program over the builds of all `entries`, for `generateApiReport` to share
 * between them: built once instead of once per entry point.
 */
export function createCompilerState(entries) {
  const built = entries.filter((entry) => existsSync(entry.dtsFile));
  if (built.length === 0) return undefined;
  const [first] = built;
  return CompilerState.create(extractorConfig(first, first.dtsFile, tmpdir()), {
    additionalEntryPoints: built.map((entry) => entry.dtsFile),
  });
}

/**
 * Runs API Extractor on one entry point (or on `dtsFile` in its place) and returns the report it
 * generates, the problems it found (compiler errors, extractor errors and warnings) and the
 * top-level exports without a doc comment.
 */
export function generateApiReport(entry, options = {}) {
  const dtsFile = options.dtsFile ?? entry.dtsFile;
  if (!existsSync(dtsFile)) {
    return {
      report: undefined,
      problems: [`${path.relative(root, dtsFile)} does not exist: build the package first.`],
      undocumented: [],
    };
  }
  const temp = mkdtempSync(path.join(tmpdir(), 'claw-api-report-'));
  try {
    const config = extractorConfig(entry, dtsFile, temp);
    const problems = [];
    try {
      Extractor.invoke(config, {
        localBuild: true,
        ...(options.compilerState === undefined ? {} : { compilerState: options.compilerState }),
        messageCallback: (message) => {
          message.handled = true;
          if (message.logLevel === 'error' || message.logLevel === 'warning') {
            const where = message.sourceFilePath === undefined
              ? ''
              : ` (${path.relative(root, message.sourceFilePath)}:${message.sourceFileLine ?? 0})`;
            problems.push(`${message.logLevel} ${message.messageId}: ${message.text}${where}`);
          }
        },
      });
    } catch (error) {
      // E.g. a declaration file that a build running at the same time has not finished writing.
      problems.push(`API Extractor failed on ${path.relative(root, dtsFile)}: ${error.message}`);
      return { report: undefined, problems, undocumented: [] };
    }
    const generated = path.join(temp, `${entry.reportName}.api.md`);
    const report = existsSync(generated) ? stableReport(readFileSync(generated, 'utf8')) : undefined;
    if (report === undefined) problems.push('API Extractor wrote no report.');
    const undocumented = report !== undefined && documentedPackages.includes(entry.packageName)
      ? undocumentedExports(report)
      : [];
    return { report, problems, undocumented };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

/**
 * The report without the places of the warnings API Extractor lists at its end (`// dist/x.d.ts:
 * 310:13 - (ae-forgotten-export) …`): lines of a build, and tsup names its shared declaration
 * chunks by a hash, so they would change with every unrelated edit of the package.
 */
export function stableReport(report) {
  return sortEnumMembers(
    report.replaceAll(/^\/\/ \S+\.d\.ts:\d+:\d+ - \((ae-[\w-]+)\)/gm, '// Warning: ($1)'),
  );
}

/**
 * The members of each zod enum's value map (`z.ZodEnum<{ ask: "ask"; deny: "deny"; }>`) in
 * name order. TypeScript prints them in the order it first met each string literal, and tsup's
 * declaration build visits files in an order that varies from build to build, so the same source
 * gave "deny" first in one build and last in the next. The members of an object type have no
 * order, so sorting them changes nothing the report pins; a value added, removed or renamed
 * still shows.
 */
export function sortEnumMembers(report) {
  const lines = report.split('\n');
  const out = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    out.push(line);
    if (!/ZodEnum<\{$/.test(line)) continue;
    const members = [];
    let next = index + 1;
    while (/^\s+("?)([\w$-]+)\1: "\2";$/.test(lines[next] ?? '')) members.push(lines[next++]);
    // Only a block that is nothing but self-named members up to its closing brace.
    if (!/^\s*\}/.test(lines[next] ?? '')) continue;
    const key = (member) => member.trim();
    out.push(...members.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)));
    index = next - 1;
  }
  return out.join('\n');
}

/**
 * The top-level declarations that a report marks "(undocumented)": API Extractor writes that
 * mark on the comment line above each export whose doc comment has no summary. Members of
 * classes and interfaces are indented and not counted.
 */
export function undocumentedExports(report) {
  const names = [];
  const lines = report.split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (!/^\/\/ .*\(undocumented\)\s*$/.test(lines[index] ?? '')) continue;
    let next = index + 1;
    while ((lines[next] ?? '').startsWith('//')) next++;
    const declaration = lines[next] ?? '';
    const match = /^(?:export )?(?:declare )?(?:abstract )?(?:function|class|interface|type|const|let|var|enum|namespace) ([\w$]+)/
      .exec(declaration);
    names.push(match?.[1] ?? declaration.trim());
  }
  return names;
}

/**
 * Checks one entry point against its committed report. `update` writes the generated report in
 * place of the committed one instead of comparing them. `dtsFile` and `reportFile` stand in for
 * the entry's own (tests use them).
 */
export function checkApiReport(entry, options = {}) {
  const reportFile = options.reportFile ?? entry.reportFile;
  const { report, problems, undocumented } = generateApiReport(entry, options);
  const failures = [...problems];
  if (undocumented.length > 0) {
    failures.push(
      'exports without a doc comment (DIST-5: one line that says what each is for): ' +
      `${undocumented.join(', ')}.`,
    );
  }
  let status = 'same';
  let diff = '';
  if (report !== undefined) {
    const committed = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : undefined;
    if (options.update === true) {
      if (committed !== report) {
        mkdirSync(path.dirname(reportFile), { recursive: true });
        writeFileSync(reportFile, report);
        status = committed === undefined ? 'created' : 'updated';
      }
    } else if (committed === undefined) {
      status = 'missing';
      failures.push(`${path.relative(root, reportFile)} does not exist. Run \`${updateCommand}\` and commit it.`);
    } else if (committed !== report) {
      status = 'changed';
      diff = lineDiff(committed, report);
      failures.push(
        `the public API of ${entry.importName} differs from ${path.relative(root, reportFile)}:\n${diff}\n` +
        `If the change is intended, run \`${updateCommand}\` and commit the updated report.`,
      );
    }
  }
  return { entry, status, diff, failures };
}

/**
 * The lines that differ between two texts ("-" committed, "+" now), from their longest common
 * subsequence, each with its line number; at most `limit` lines.
 */
export function lineDiff(before, after, limit = 60) {
  const a = before.split('\n');
  const b = after.split('\n');
  // Common head and tail first: the table below then covers only the changed middle.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const table = Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1));
  for (let i = midA.length - 1; i >= 0; i--) {
    for (let j = midB.length - 1; j >= 0; j--) {
      table[i][j] = midA[i] === midB[j]
        ? table[i + 1][j + 1] + 1
        : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      i++;
      j++;
    } else if (i < midA.length && (j === midB.length || table[i + 1][j] >= table[i][j + 1])) {
      out.push(`  - ${String(start + i + 1).padStart(4)}: ${midA[i]}`);
      i++;
    } else {
      out.push(`  + ${String(start + j + 1).padStart(4)}: ${midB[j]}`);
      j++;
    }
  }
  if (out.length > limit) {
    return [...out.slice(0, limit), `  … and ${out.length - limit} more changed lines`].join('\n');
  }
  return out.join('\n');
}

function main() {
  const update = process.argv.includes('--update');
  const entries = apiEntryPoints();
  const compilerState = createCompilerState(entries);
  let failed = 0;
  for (const entry of entries) {
    const result = checkApiReport(entry, { update, compilerState });
    if (result.failures.length === 0) {
      if (result.status !== 'same') {
        console.log(`${result.status} ${path.relative(root, entry.reportFile)}`);
      }
      continue;
    }
    failed++;
    console.error(`\n${entry.importName}:`);
    for (const failure of result.failures) console.error(`  ${failure}`);
  }
  const count = entries.length;
  if (failed > 0) {
    console.error(`\napi-report: ${failed} of ${count} entry points failed.`);
    process.exit(1);
  }
  console.log(`api-report: ${count} entry points ${update ? 'written' : 'match their reports'}.`);
}

// Run as a command, not imported (the test imports it).
const invoked = process.argv[1] === undefined ? undefined : path.resolve(process.argv[1]);
if (invoked === fileURLToPath(import.meta.url)) main();
