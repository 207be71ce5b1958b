import { diffSnapshots } from '../workspace.js';
import { negativeResult, observationsOf, runEvidence, runMessages, runToolCalls } from './evidence.js';
import { thinkingResults } from './thinking.js';
import { result, type ScoreResult, type Scorer } from './types.js';

/**
 * The state scorer (EVAL-3): how the run ended (status, error, final answer, the reasoning it
 * reported and kept) and what the workspace holds afterwards (files equal / contain / absent /
 * unchanged), and that nothing outside the workspace changed.
 */
export const scoreState: Scorer = (context) => {
  const { run, evalCase } = context;
  const results: ScoreResult[] = [];
  const outcome = evalCase.expect.outcome;
  if (outcome?.status !== undefined) {
    results.push(result('state', 'run status', 'positive', run.status === outcome.status,
      run.status === outcome.status
        ? `the run ended ${run.status}`
        : `the run ended ${run.status}${run.errorMessage === undefined ? '' : ` (${run.errorMessage})`}, expected ${outcome.status}`,
      { expected: outcome.status, actual: run.status }));
  }
  if (outcome?.errorCode !== undefined) {
    results.push(result('state', 'error code', 'positive', run.errorCode === outcome.errorCode,
      run.errorCode === outcome.errorCode
        ? `the run stopped with ${run.errorCode}`
        : `the run's error code is ${run.errorCode ?? 'none'}, expected ${outcome.errorCode}`,
      { expected: outcome.errorCode, actual: run.errorCode ?? null }));
  }
  if (outcome?.errorMessageContains !== undefined) {
    const pass = run.errorMessage?.includes(outcome.errorMessageContains) === true;
    results.push(result('state', 'error message contains', 'positive', pass,
      pass
        ? `the error message contains "${outcome.errorMessageContains}"`
        : run.errorMessage === undefined
          ? 'the run ended without an error'
          : `the error message does not contain "${outcome.errorMessageContains}"`,
      { expected: outcome.errorMessageContains, actual: run.errorMessage ?? null }));
  }
  if (outcome?.finalText !== undefined) {
    const pass = run.finalText === outcome.finalText;
    results.push(result('state', 'final answer', 'positive', pass,
      pass ? 'the final answer is as expected' : 'the final answer differs',
      { expected: outcome.finalText, actual: run.finalText }));
  }
  if (outcome?.finalTextContains !== undefined) {
    const pass = run.finalText.includes(outcome.finalTextContains);
    results.push(result('state', 'final answer contains', 'positive', pass,
      pass
        ? `the final answer contains "${outcome.finalTextContains}"`
        : `the final answer does not contain "${outcome.finalTextContains}"`,
      { expected: outcome.finalTextContains, actual: run.finalText }));
  }
  results.push(...thinkingResults(context));

  const calls = runToolCalls(context);
  const messages = runMessages(context);
  for (const expected of evalCase.expect.observations ?? []) {
    const call = calls[expected.call - 1];
    const observation = call === undefined ? undefined : observationsOf(messages, call.id)[0];
    const problems: string[] = [];
    if (observation === undefined) {
      problems.push(call === undefined ? `the run made only ${calls.length} tool call(s)` : `${call.id} has no Observation`);
    } else {
      if (expected.error !== undefined && (observation.isError === true) !== expected.error) {
        problems.push(expected.error ? 'it is not an error' : 'it is an error');
      }
      if (expected.contains !== undefined && !observation.content.includes(expected.contains)) {
        problems.push(`it does not contain "${expected.contains}"`);
      }
    }
    results.push(result('state', `Observation of call ${expected.call}`, 'positive', problems.length === 0,
      problems.length === 0
        ? `the Observation of ${call?.name} (${call?.id}) is as expected`
        : `the Observation of call ${expected.call}${call === undefined ? '' : ` (${call.name})`}: ${problems.join(', ')}`,
      {
        expected,
        actual: observation === undefined
          ? null
          : { error: observation.isError === true, content: observation.content },
      }));
  }

  const evidence = runEvidence(context);
  const before = run.files.before;
  const after = run.files.after;
  for (const [file, expectation] of Object.entries(evalCase.expect.files ?? {})) {
    const content = after[file];
    if (expectation.equals !== undefined) {
      const pass = content === expectation.equals;
      results.push(result('state', `${file} equals`, 'positive', pass,
        content === undefined
          ? `${file} does not exist after the run`
          : pass ? `${file} has the expected content` : `${file} has other content`,
        { expected: expectation.equals, actual: content ?? null }));
    }
    const contains = expectation.contains === undefined
      ? []
      : Array.isArray(expectation.contains) ? expectation.contains : [expectation.contains];
    for (const text of contains) {
      const pass = content?.includes(text) === true;
      results.push(result('state', `${file} contains`, 'positive', pass,
        content === undefined
          ? `${file} does not exist after the run`
          : pass ? `${file} contains "${text}"` : `${file} does not contain "${text}"`,
        { expected: text, actual: content ?? null }));
    }
    if (expectation.absent === true) {
      const absent = content === undefined;
      results.push(negativeResult('state', `${file} absent`, absent, evidence,
        absent ? `${file} does not exist` : `${file} exists after the run`,
        { expected: null, actual: content ?? null }));
    }
    if (expectation.unchanged === true) {
      const unchanged = content === before[file];
      results.push(negativeResult('state', `${file} unchanged`, unchanged, evidence,
        unchanged ? `${file} is as it was` : `${file} changed`,
        { expected: before[file] ?? null, actual: content ?? null }));
    }
  }

  if (run.infraError === undefined) {
    const changes = diffSnapshots(run.outside.before, run.outside.after);
    const unchanged = changes.length === 0;
    results.push(negativeResult('state', 'nothing outside the workspace changed', unchanged, evidence,
      unchanged
        ? 'the folder beside the workspace is as it was'
        : `outside the workspace: ${changes.map((change) => `${change.path} ${change.change}`).join(', ')}`,
      { expected: [], actual: changes.map(({ path, change }) => ({ path, change })) },
      'invariant'));
  }
  return results;
};
