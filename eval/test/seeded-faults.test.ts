import { describe, expect, it } from 'vitest';
import { runOne, suiteCase, variant } from './helpers.js';

// Regressions seeded into runs of the real engine through the harness's fault options: each must
// make the case that guards against it fail, for the reason it guards.
describe('seeded faults', () => {
  it('a budget check that lets one more model call through fails token-budget', async () => {
    const evalCase = await suiteCase('token-budget');
    expect((await runOne(evalCase)).verdict).toBe('pass');
    const result = await runOne(evalCase, { faults: { budgetLeak: true } });
    expect(result.verdict).toBe('fail');
    const failed = (result.samples[0]?.scores ?? []).filter((score) => !score.pass).map((score) => score.assertion);
    expect(failed).toEqual(expect.arrayContaining(['model calls', 'no model call after the stop', 'no extra model call', 'stop reason']));
    expect(result.reason).toContain('the model was called 2 time(s), expected exactly 1');
  });

  it('a cancel that drops one synthetic result fails cancel-pairing', async () => {
    const evalCase = await suiteCase('cancel-pairing');
    expect((await runOne(evalCase)).verdict).toBe('pass');
    const result = await runOne(evalCase, { faults: { dropCanceledObservation: true } });
    expect(result.verdict).toBe('fail');
    const history = result.samples[0]?.scores.find((score) => score.assertion === 'history paired');
    expect(history?.pass).toBe(false);
    expect(history?.reason).toMatch(/call_2_\d \(fetch_report\) has 0 Observations, not exactly one/);
    const canceled = result.samples[0]?.scores.find((score) => score.assertion === 'canceled Observations');
    expect(canceled?.actual).toBe(1);
  });

  it('a system prompt rebuilt for each request fails system-prompt-stable', async () => {
    const evalCase = await suiteCase('system-prompt-stable');
    expect((await runOne(evalCase)).verdict).toBe('pass');
    const result = await runOne(evalCase, { faults: { driftingSystemPrompt: true } });
    expect(result.verdict).toBe('fail');
    const failed = (result.samples[0]?.scores ?? []).filter((score) => !score.pass);
    // Only stability fails: the texts are all there, in order, in every request.
    expect(failed.map((score) => `${score.scorer}/${score.assertion}`)).toEqual(['requests/system message stable']);
    expect(failed[0]?.reason).toMatch(/^the run: the system message of request 2 differs from request 1's at character \d+: .* became .*\\n\(request 2\)"$/);
  });

  it('reasoning sent back to the model fails reasoning-stream-http, on either transport', async () => {
    for (const transport of ['openai-http', 'in-process'] as const) {
      const evalCase = await variant('reasoning-stream-http', { id: `reasoning-echo-${transport}`, model: { transport } });
      expect((await runOne(evalCase)).verdict).toBe('pass');
      const result = await runOne(evalCase, { faults: { echoReasoning: true } });
      expect(result.verdict).toBe('fail');
      const sent = result.samples[0]?.scores.find((score) => score.assertion === 'reasoning not sent back');
      expect(sent?.pass).toBe(false);
      expect(sent?.reason).toBe('request 2 sends the reasoning of reply 1 back ("The user wants the version. It is in package.json: read it f")');
      // What the run reported and stored is as before: only the requests changed.
      expect(result.samples[0]?.scores.filter((score) => score.scorer === 'state').every((score) => score.pass)).toBe(true);
    }
  });

  it('a serial tool wave fails parallel-wave', async () => {
    const evalCase = await suiteCase('parallel-wave');
    expect((await runOne(evalCase)).verdict).toBe('pass');
    const result = await runOne(evalCase, { faults: { serialTools: true } });
    expect(result.verdict).toBe('fail');
    const wave = result.samples[0]?.scores.find((score) => score.assertion === 'parallel wave wall time');
    expect(wave?.pass).toBe(false);
    expect(wave?.reason).toContain('not about the slowest tool');
    // The wave took about the sum of its tools (360 ms), not the slowest (180 ms).
    expect(result.samples[0]?.metrics.waveWallMs[0]).toBeGreaterThanOrEqual(359);
  });

  it('a view that drops the summary fails long-task-compacted, where the last turns need it', async () => {
    const evalCase = await suiteCase('long-task-compacted');
    expect((await runOne(evalCase)).verdict).toBe('pass');
    const result = await runOne(evalCase, { faults: { dropSummary: true } });
    expect(result.verdict).toBe('fail');
    const failed = (result.samples[0]?.scores ?? []).filter((score) => !score.pass).map((score) => `${score.scorer}/${score.assertion}`);
    expect(failed).toEqual(expect.arrayContaining([
      'requests/round 62 request',
      'requests/round 63 request',
      'compaction/next request is the compacted view',
    ]));
    // The compactions themselves were made, told and stored as before: only the requests changed.
    expect(failed.filter((name) => name.startsWith('compaction/') && name !== 'compaction/next request is the compacted view')).toEqual([]);
  }, 60_000);
});
