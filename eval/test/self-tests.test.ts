import { spanAttributes, spanNames } from '@claw/engine';
import { describe, expect, it } from 'vitest';
import { defineCase, scorerNames, type ScorerName } from '../src/case.js';
import { scriptedDelays } from '../src/metrics.js';
import type { Scorer } from '../src/scorers/index.js';
import { thinkingSpans } from '../src/span-tree.js';
import { runSuite, scoreRun } from '../src/suite.js';
import { runOne, suiteCase, suiteCases, variant } from './helpers.js';

/** A broken scorer: whatever the run did, it reports one passing assertion. */
const alwaysPass = (name: ScorerName): Scorer => () => [
  { scorer: name, assertion: 'anything', kind: 'positive', pass: true, reason: 'always passes' },
];

describe('harness self-tests', () => {
  it.each(scorerNames.map((name) => [name]))('a %s scorer that always passes is caught by its canary case', async (name) => {
    const canary = (await suiteCases()).find((evalCase) => evalCase.canary === name);
    if (canary === undefined) throw new Error(`no canary for ${name}`);
    const healthy = await runOne(canary);
    expect(healthy.verdict, healthy.reason).toBe('pass');
    const broken = await runOne(canary, { scorers: { [name]: alwaysPass(name) } });
    expect(broken.verdict).toBe('fail');
    expect(broken.reason).toContain(`the ${name} scorer passed a run built to fail it`);
  });

  it('an extra model call fails the case and shows the request the engine sent', async () => {
    // task-completed without its last round: the engine asks the model a second time.
    const base = await suiteCase('task-completed');
    const short = await variant('task-completed', { id: 'task-completed-short', script: base.script.slice(0, 1) });
    const result = await runOne(short);
    expect(result.verdict).toBe('fail');
    const extra = result.samples[0]?.scores.find((score) => score.assertion === 'no extra model call');
    expect(extra?.pass).toBe(false);
    expect(extra?.reason).toContain('model call(s) past the script of 1 round(s)');
    // The request is shown: the tool result the engine sent back, and the user's prompt in it
    // after claw's system message (REAL-1).
    expect(extra?.reason).toContain('tool call_1_1:');
    const request = (extra?.actual as { request: Array<{ role: string; content: string }> }).request;
    expect(request.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(request[0]?.content).toMatch(/^You are claw, a coding agent\./);
    expect(request[1]?.content).toBe(base.prompt);
    expect(result.reason).toContain('no extra model call');
  });

  it('a case whose run fails before its write fails "no unauthorized write" instead of passing it', async () => {
    const evalCase = await suiteCase('denied-write');
    const healthy = await runOne(evalCase);
    expect(healthy.verdict, healthy.reason).toBe('pass');
    // The model call that would have asked for the write fails: the write never got near the gate.
    const result = await runOne(evalCase, { faults: { failModelCall: 1 } });
    expect(result.verdict).toBe('fail');
    const scores = result.samples[0]?.scores ?? [];
    const unchanged = scores.find((score) => score.assertion === 'app.js unchanged');
    // The file is unchanged, but that proves nothing: the run never reached the write.
    expect(unchanged?.pass).toBe(false);
    expect(unchanged?.reason).toContain('app.js is as it was, but that proves nothing');
    const refused = scores.find((score) => score.scorer === 'boundary' && score.assertion === 'write_file app.js refused');
    expect(refused?.pass).toBe(false);
    expect(refused?.reason).toContain('the model never called write_file');
  });

  it('a case with only negative assertions is refused when it is defined', async () => {
    const { kind: _kind, ...input } = await suiteCase('denied-write');
    expect(() => defineCase({ ...input, id: 'only-negative', expect: { files: { 'app.js': { unchanged: true } } } }))
      .toThrow(/has no positive assertion/);
  });

  it('replay with timing reproduces the scripted ttfb on the model call\'s span', async () => {
    for (const ttfbMs of [30, 70]) {
      const evalCase = await variant('streamed-timing', {
        id: `streamed-timing-${ttfbMs}`,
        script: [{ chunks: ['a', 'b', 'c'], usage: { promptTokens: 5, completionTokens: 3 }, ttfbMs, chunkGapMs: 40 }],
        expect: { outcome: { status: 'completed', finalText: 'abc' }, trace: { ttfbFromScript: true } },
      });
      const result = await runOne(evalCase);
      expect(result.verdict, result.reason).toBe('pass');
      const run = result.samples[0]?.run;
      const [span] = thinkingSpans(run?.spans ?? []);
      const ttfb = span?.attributes[spanAttributes.ttfbMs];
      expect(typeof ttfb).toBe('number');
      // At least the scripted wait, and taken at the first piece: the two 40 ms gaps to the last
      // one come after it (late timers on a busy machine can only widen both).
      expect(ttfb as number).toBeGreaterThanOrEqual(ttfbMs - 1);
      expect(span!.durationMs - (ttfb as number)).toBeGreaterThanOrEqual(2 * 40 - 1);
      // The run span carries the same figure (OBS-2), and the scripted model time is taken off.
      const root = run?.spans.find((candidate) => candidate.name === spanNames.run);
      expect(root?.attributes[spanAttributes.ttfbMs]).toBe(ttfb);
      expect(scriptedDelays(run!).modelMs).toBeGreaterThanOrEqual(ttfbMs + 3 * 40 - 3);
    }
  });

  it('a span whose ttfb does not match the script fails the ttfb check', async () => {
    const evalCase = await variant('streamed-timing', {
      id: 'streamed-timing-fast',
      script: [{ chunks: ['a', 'b'], usage: { promptTokens: 5, completionTokens: 2 } }],
      expect: { outcome: { status: 'completed' }, trace: { ttfbFromScript: true } },
    });
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    // The same run scored against a script that claims 500 ms before the first piece.
    const run = result.samples[0]!.run;
    const rescored = scoreRun(evalCase, { ...run, script: [{ ...run.script[0]!, ttfbMs: 500 }] });
    expect(rescored.verdict).toBe('fail');
    expect(rescored.reason).toContain('is shorter than the scripted 500');
  });

  it('a ttfb taken at the last piece of a streamed reply fails the ttfb check', async () => {
    const evalCase = await suiteCase('streamed-timing');
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    // The same run with the span's ttfb moved to the end of its reply.
    const run = result.samples[0]!.run;
    const spans = run.spans.map((span) => span.name === 'Thinking'
      ? { ...span, attributes: { ...span.attributes, [spanAttributes.ttfbMs]: span.durationMs } }
      : span);
    const rescored = scoreRun(evalCase, { ...run, spans });
    expect(rescored.verdict).toBe('fail');
    expect(rescored.reason).toMatch(/ttfb_ms [\d.]+ leaves 0\.0 ms of the call after it, less than the scripted 160 ms between its pieces/);
  });
});

describe('runs that do not end', () => {
  it('a run that does not end in time is canceled and fails its case', async () => {
    // A tool that takes a minute and no budget to stop it: the harness's time limit must.
    const evalCase = await variant('tool-time-budget', {
      id: 'never-ends',
      budgets: {},
      expect: { outcome: { status: 'completed' } },
    });
    const suite = await runSuite([evalCase], { run: { timeoutMs: 150 } });
    const result = suite.cases[0]!;
    expect(result.verdict).toBe('fail');
    expect(result.samples[0]?.run.timedOut).toBe(true);
    expect(result.samples[0]?.run.status).toBe('canceled');
    expect(result.reason).toContain('script/the run ended in time: the run did not end in time: the harness canceled it (it ended canceled)');
    // History stays paired even so.
    expect(result.samples[0]?.scores.find((score) => score.assertion === 'history paired')?.pass).toBe(true);
  });
});
