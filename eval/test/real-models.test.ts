import { defaultSettings } from '@claw/runtime';
import { describe, expect, it } from 'vitest';
import { runSettings } from '../src/harness.js';
import { buildResults } from '../src/results.js';
import { machineInfo } from '../src/environment.js';
import { renderHtmlReport } from '../src/report/html.js';
import { runSuite } from '../src/suite.js';
import { runOne, suiteCase, variant } from './helpers.js';

// REAL-7: the script fields a real model's replies need (reasoning, cached tokens), a run in a
// folder of the workspace, and the requests both transports record.
describe('reasoning and cached tokens on both transports', () => {
  it.each([['in-process'], ['openai-http']] as const)('%s: reasoning is reported, stored, kept out of the answer and of later requests', async (transport) => {
    const evalCase = await variant('reasoning-stream-http', { id: `reasoning-${transport}`, model: { transport } });
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    const run = result.samples[0]!.run;
    const pieces = run.timeline.filter((event) => event.type === 'thinking_delta').map((event) => event.detail);
    expect(pieces.join('')).toBe('The user wants the version. It is in package.json: read it first.The file says 2.4.1; answer with just that.');
    expect(run.finalText).toBe('The app is version 2.4.1.');
    const replies = run.history.filter((message) => message.role === 'assistant');
    expect(replies.map((message) => message.role === 'assistant' ? message.reasoning : undefined)).toEqual([
      'The user wants the version. It is in package.json: read it first.',
      'The file says 2.4.1; answer with just that.',
    ]);
    // The second request, as sent: the first reply without its reasoning.
    const assistantOnWire = run.modelCalls[1]?.wire.find((message) => (message as { role?: string }).role === 'assistant');
    expect(Object.keys(assistantOnWire as object).sort()).toEqual(['content', 'role', 'tool_calls']);
  });

  it.each([['in-process'], ['openai-http']] as const)('%s: cached tokens reach the price: the run costs the hand-computed figure', async (transport) => {
    const evalCase = await variant('cached-tokens-priced', { id: `cached-${transport}`, model: { transport, name: 'gpt-4.1-mini' } });
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    const run = result.samples[0]!.run;
    expect(run.runCost?.unpricedCalls).toBe(0);
    expect(run.runCost?.usd).toBeCloseTo(0.000452, 12);
    // Each call's span carries its own price, and the model that answered.
    const spans = run.spans.filter((span) => span.name === 'Thinking');
    expect(spans.map((span) => span.attributes['gen_ai.response.model'])).toEqual(['gpt-4.1-mini', 'gpt-4.1-mini']);
    expect(spans.map((span) => Math.round((span.attributes['claw.cost.usd'] as number) * 1e9))).toEqual([240_000, 212_000]);
  });

  it('without cached tokens in the script, the same usage costs the input price throughout', async () => {
    const base = await suiteCase('cached-tokens-priced');
    const evalCase = await variant('cached-tokens-priced', {
      id: 'cached-none',
      script: base.script.map(({ usage, ...round }) => {
        if (usage === undefined) return round;
        const { cachedTokens: _cached, ...uncached } = usage;
        return { ...round, usage: uncached };
      }),
    });
    const result = await runOne(evalCase);
    expect(result.verdict).toBe('fail');
    const cost = result.samples[0]?.scores.find((score) => score.assertion === 'cost');
    expect(cost?.reason).toBe('the run cost $0.000992000, expected $0.000452000 (2 model call(s) answered by gpt-4.1-mini)');
  });

  it('a reply\'s reasoning shows in the report\'s transcript, apart from its text', async () => {
    const suite = await runSuite([await suiteCase('reasoning-stream-http')]);
    const results = buildResults(suite, { version: '0.0.0-test', git: { sha: null, dirty: null }, machine: machineInfo(), filters: [], tags: [] });
    const html = renderHtmlReport(results);
    expect(html).toContain('<div class="thinking" title="reasoning: kept in the session, not sent back">The file says 2.4.1; answer with just that.</div><div class="reason">The app is version 2.4.1.</div>');
    expect(results.cases[0]?.samples[0]?.detail?.timeline.some((event) => event.type === 'thinking_delta')).toBe(true);
  });
});

describe('the folder the run works in', () => {
  it('runs in workdir: tools resolve there, its .claw state stays out of the workspace snapshot', async () => {
    const result = await runOne(await suiteCase('agents-md-nested'));
    expect(result.verdict, result.reason).toBe('pass');
    const run = result.samples[0]!.run;
    expect(run.folders?.workDir).toBe(`${run.folders?.workspace}/sub`);
    expect(Object.keys(run.files.after).sort()).toEqual(['.git/HEAD', 'AGENTS.md', 'other/AGENTS.md', 'sub/AGENTS.md', 'sub/app.py']);
    // The user's config folder lies beside the workspace, unchanged.
    expect(run.outside.after).toEqual(run.outside.before);
    expect(run.outside.before['config/claw/AGENTS.md']).toBe('User rule: answer briefly.\n');
  });

  it('without workdir the same files give only the user\'s and the root\'s instructions', async () => {
    const evalCase = await variant('agents-md-nested', {
      id: 'agents-md-root',
      workdir: undefined,
      script: [{ text: 'Nothing to do.' }],
      expect: {
        outcome: { status: 'completed' },
        requests: { system: { contains: ['<instructions path="AGENTS.md">\nRoot rule'], absent: ['Sub rule', 'Other rule'] } },
      },
    });
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
  });
});

describe('the openai-http transport', () => {
  it('is limited as the runtime limits a model: its defaults (REAL-3), or the case\'s', async () => {
    const plain = await suiteCase('retry-after-429');
    const defaults = runSettings(plain, {}, 'scripted');
    expect(defaults).toMatchObject({
      model: 'claw-eval-script',
      retries: 2,
      callTimeoutMs: 0,
      firstTokenTimeoutMs: 120_000,
      streamIdleTimeoutMs: 120_000,
      maxTurns: 200,
    });
    expect(defaults).toMatchObject({
      callTimeoutMs: defaultSettings.callTimeoutMs,
      firstTokenTimeoutMs: defaultSettings.firstTokenTimeoutMs,
      streamIdleTimeoutMs: defaultSettings.streamIdleTimeoutMs,
    });
    const given = await variant('retry-after-429', {
      id: 'limits',
      model: { transport: 'openai-http', name: 'acme', price: { inputPerMillion: 1, outputPerMillion: 2 }, retries: 4, callTimeoutMs: 9_000, firstTokenTimeoutMs: 5_000, streamIdleTimeoutMs: 7_000 },
    });
    expect(runSettings(given, {}, 'scripted')).toMatchObject({
      model: 'acme',
      prices: { acme: { inputPerMillion: 1, outputPerMillion: 2 } },
      retries: 4,
      callTimeoutMs: 9_000,
      firstTokenTimeoutMs: 5_000,
      streamIdleTimeoutMs: 7_000,
    });
    // Against a real model, the configured model is used and priced.
    const real = { ...defaultSettings, model: 'gpt-real', apiKey: 'k', baseUrl: undefined, approval: 'allow' as const };
    expect(runSettings(given, { settings: real }, 'real')).toMatchObject({ model: 'gpt-real', prices: {}, approval: 'ask' });
  });

  it('a hang with no first-token limit in the case is stopped by the default one (its wait skipped)', async () => {
    const evalCase = await variant('first-token-timeout', { id: 'first-token-default', model: { transport: 'openai-http', retries: 1 } });
    const result = await runOne(evalCase);
    expect(result.verdict, result.reason).toBe('pass');
    expect(result.samples[0]?.run.modelCalls.map((call) => call.kind)).toEqual(['fault', 'reply']);
  });

  it('records each request body as the server received it', async () => {
    const result = await runOne(await suiteCase('system-prompt-stable-http'));
    expect(result.verdict, result.reason).toBe('pass');
    const calls = result.samples[0]!.run.modelCalls;
    expect(calls.map((call) => call.kind)).toEqual(['reply', 'fault', 'reply', 'reply']);
    const [system] = calls[0]!.wire as Array<{ role: string; content: string }>;
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/^You are claw, a coding agent\./);
    // The retried attempt sent the very same body.
    expect(calls[2]!.wire).toEqual(calls[1]!.wire);
  });
});
