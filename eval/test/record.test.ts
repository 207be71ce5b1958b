import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultSettings, type Settings } from '@claw/runtime';
import { ScriptedProvider } from '@claw/testing';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingProvider, recordCase, realSettings } from '../src/record.js';
import { normalizeRecording, normalizeText, recordedCase, relaxedExpectations, secretValues } from '../src/recorded.js';
import { buildResults } from '../src/results.js';
import { machineInfo } from '../src/environment.js';
import { runSuite } from '../src/suite.js';
import { runOne, suiteCase, variant } from './helpers.js';

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const places = { root: '/srv/runs/claw-eval-x-1', workspace: '/srv/runs/claw-eval-x-1/workspace', outside: '/srv/runs/claw-eval-x-1/outside', home: '/home/dev' };

describe('record normalisation', () => {
  it('redacts secrets, replaces the run\'s paths with placeholders and the model\'s call ids with the harness\'s', () => {
    const text = normalizeText(
      'key sk-live-abcdefgh12345 and Bearer abc.def.ghi12345, api_key: "hunter2hunter2", mine: s3cr3t-value, ' +
      'wrote /srv/runs/claw-eval-x-1/workspace/a.txt, not /srv/runs/claw-eval-x-1/outside/b, see /home/dev/.ssh; call_AbC1',
      { places, secrets: ['s3cr3t-value'], ids: new Map([['call_AbC1', 'call_1_1']]) },
    );
    expect(text).toBe(
      'key [redacted] and Bearer [redacted], api_key: "[redacted]", mine: [redacted], ' +
      'wrote {{workspace}}/a.txt, not {{outside}}/b, see ~/.ssh; call_1_1',
    );
  });

  it('takes secrets from the environment variables whose names say so', () => {
    expect(secretValues({ OPENAI_API_KEY: 'sk-123456', GITHUB_TOKEN: 'ghp_abcdef', DB_PASSWORD: 'pw', HOME: '/home/dev', PATH: '/usr/bin' }))
      .toEqual(['sk-123456', 'ghp_abcdef']);
  });

  it('turns replies into rounds: arguments as objects, ids dropped, timing rounded, typical gap kept', () => {
    const rounds = normalizeRecording([
      {
        text: 'Reading.',
        chunks: ['Read', 'ing.'],
        toolCalls: [{ id: 'call_XYZ', name: 'read_file', arguments: '{"path":"/srv/runs/claw-eval-x-1/workspace/a.txt"}' }],
        usage: { promptTokens: 10, completionTokens: 3 },
        ttfbMs: 812.4,
        gapsMs: [20.2, 30.6, 25.1],
      },
      { text: 'Done after call_XYZ.', chunks: ['Done after call_XYZ.'], toolCalls: [{ id: 'c2', name: 'bash', arguments: 'not json' }], gapsMs: [] },
    ], { places, secrets: [] });
    expect(rounds).toEqual([
      {
        chunks: ['Read', 'ing.'],
        toolCalls: [{ name: 'read_file', arguments: { path: '{{workspace}}/a.txt' } }],
        usage: { promptTokens: 10, completionTokens: 3 },
        ttfbMs: 812,
        chunkGapMs: 25,
      },
      { text: 'Done after call_1_1.', toolCalls: [{ name: 'bash', arguments: 'not json' }] },
    ]);
  });

  it('relaxes a case\'s trajectory and exact counts for a model that may take other steps', () => {
    expect(relaxedExpectations({
      outcome: { status: 'completed' },
      trajectory: { strict: ['read_file', 'edit_file'], forbidden: ['write_file'], counts: { read_file: 1 } },
      budget: { modelCalls: 3, stop: 'x' },
      trace: { retries: 1, subagentRuns: 1 },
    })).toEqual({
      outcome: { status: 'completed' },
      trajectory: { subset: ['read_file', 'edit_file'], forbidden: ['write_file'] },
      budget: { stop: 'x' },
      trace: { subagentRuns: 1 },
    });
  });

  it('keeps a reply\'s reasoning (cleaned like its text) and its cached tokens', () => {
    const [round] = normalizeRecording([{
      text: 'Done.',
      chunks: ['Done.'],
      reasoning: ['Look in /srv/runs/claw-eval-x-1/workspace', ' with sk-live-abcdefgh12345.'],
      toolCalls: [],
      usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 64 },
      gapsMs: [],
    }], { places, secrets: [] });
    expect(round).toEqual({
      text: 'Done.',
      reasoning: ['Look in {{workspace}}', ' with [redacted].'],
      usage: { promptTokens: 100, completionTokens: 5, cachedTokens: 64 },
    });
  });

  it('drops from a replayed or real run what depends on the script\'s usage and reasoning', () => {
    expect(relaxedExpectations({
      outcome: { status: 'completed' },
      budget: { costUsd: 0.1, sessionTokensFromScript: true },
      requests: { system: { stable: true }, reasoningNotSent: true },
      thinking: { equals: 'x', fromScript: true, stored: true, notInAnswer: true },
    })).toEqual({
      outcome: { status: 'completed' },
      budget: { sessionTokensFromScript: true },
      requests: { system: { stable: true } },
      thinking: { notInAnswer: true },
    });
  });

  it('the recording provider keeps streamed reasoning and cached tokens', async () => {
    const inner = new ScriptedProvider([{ reasoning: ['hm', 'm'], text: 'ok', usage: { promptTokens: 9, completionTokens: 1, cachedPromptTokens: 8 } }]);
    const recorder = new RecordingProvider(inner);
    for await (const _event of recorder.stream!({ messages: [{ role: 'user', content: 'x' }] })) { /* drain */ }
    expect(recorder.replies[0]).toMatchObject({ reasoning: ['hm', 'm'], text: 'ok', usage: { promptTokens: 9, completionTokens: 1, cachedTokens: 8 } });
  });

  it('the recording provider passes replies on and keeps them with their timing', async () => {
    const inner = new ScriptedProvider([{ textChunks: ['a', 'b'], delayMs: 20, chunkDelayMs: 10, usage: { promptTokens: 2, completionTokens: 1 } }]);
    const recorder = new RecordingProvider(inner);
    const events = [];
    for await (const event of recorder.stream!({ messages: [{ role: 'user', content: 'x' }] })) events.push(event.type);
    expect(events).toEqual(['text_delta', 'text_delta', 'completed']);
    const [reply] = recorder.replies;
    expect(reply).toMatchObject({ text: 'ab', chunks: ['a', 'b'], usage: { promptTokens: 2, completionTokens: 1 } });
    expect(reply?.ttfbMs).toBeGreaterThanOrEqual(19);
    expect(reply?.gapsMs).toHaveLength(2);
  });
});

/** The workspace of the one run of `caseId` under way (its folder is named after the case). */
function workspaceOf(caseId: string): string {
  const names = readdirSync(tmpdir()).filter((name) => name.startsWith(`claw-eval-${caseId}-`));
  if (names.length !== 1) throw new Error(`expected one run folder of ${caseId}, found ${names.length}`);
  return path.join(tmpdir(), names[0] as string, 'workspace');
}

function fakeSettings(server: FakeOpenAIServer): Settings {
  return {
    ...defaultSettings,
    apiKey: 'sk-test-0123456789abcdef',
    baseUrl: server.baseURL,
    model: 'fake-model',
    approval: 'ask',
    sandbox: { isolation: 'off', allowNetwork: false },
  };
}

describe('record and real mode against an OpenAI-compatible server', () => {
  it('records a session as a normalised script that replays as a case and passes', async () => {
    const evalCase = await variant('task-completed', { id: 'record-probe' });
    // The fake model writes to the run's workspace by its absolute path, as models do.
    const server = await FakeOpenAIServer.start({
      turns: (_body, index) => {
        const workspace = workspaceOf('record-probe');
        return index === 0
          ? {
              textChunks: ['Writing ', 'it (key sk-live-abcdefgh12345).'],
              toolCalls: [{ id: 'call_9f8e7d', name: 'write_file', arguments: JSON.stringify({ path: `${workspace}/hello.txt`, content: 'hello, claw\n' }) }],
              usage: { promptTokens: 40, completionTokens: 9 },
            }
          : { text: `Created hello.txt in ${workspace} (call_9f8e7d); token=supersecretvalue`, usage: { promptTokens: 60, completionTokens: 7 } };
      },
    });
    servers.push(server);
    const settings = fakeSettings(server);
    const recording = recordCase(evalCase, { settings, env: { OPENAI_API_KEY: settings.apiKey, MY_TOKEN: 'supersecretvalue' } });
    const { recording: result, run } = await recording;
    expect(run.status).toBe('completed');
    const json = JSON.stringify(result);
    expect(json).not.toContain('call_9f8e7d');
    expect(json).not.toContain('sk-live');
    expect(json).not.toContain('supersecretvalue');
    expect(json).not.toContain(tmpdir());
    expect(result).toMatchObject({ format: 'claw-eval-recording', version: 1, case: 'record-probe', model: 'fake-model' });
    expect(result.rounds[0]).toMatchObject({
      chunks: ['Writing ', 'it (key [redacted]).'],
      toolCalls: [{ name: 'write_file', arguments: { path: '{{workspace}}/hello.txt', content: 'hello, claw\n' } }],
      usage: { promptTokens: 40, completionTokens: 9 },
    });
    expect(result.rounds[1]?.text).toBe('Created hello.txt in {{workspace}} (call_1_1); token=[redacted]');
    expect(typeof result.rounds[0]?.ttfbMs).toBe('number');

    const replay = recordedCase(result, [evalCase], 'test');
    const replayed = await runOne(replay);
    expect(replayed.verdict, replayed.reason).toBe('pass');
  });

  it('real mode runs the cases against the configured model and reports pass@1 and pass^k', async () => {
    const evalCase = await suiteCase('task-completed');
    // Trial 1 does the task; trial 2 writes the wrong content.
    const good: FakeTurn[] = [
      { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'hello.txt', content: 'hello, claw\n' }) }], usage: { promptTokens: 30, completionTokens: 5 } },
      { text: 'Created hello.txt.', usage: { promptTokens: 40, completionTokens: 4 } },
    ];
    const bad: FakeTurn[] = [
      { toolCalls: [{ name: 'write_file', arguments: JSON.stringify({ path: 'hello.txt', content: 'bye\n' }) }], usage: { promptTokens: 30, completionTokens: 5 } },
      { text: 'Created hello.txt.', usage: { promptTokens: 40, completionTokens: 4 } },
    ];
    const server = await FakeOpenAIServer.start({ turns: [...good, ...bad] });
    servers.push(server);
    const suite = await runSuite([evalCase], { mode: 'real', repeat: 2, run: { settings: fakeSettings(server) } });
    const results = buildResults(suite, { version: 't', git: { sha: null, dirty: null }, machine: machineInfo(), filters: [], tags: [], model: 'fake-model' });
    expect(server.requests).toHaveLength(4);
    expect(results.mode).toBe('real');
    expect(results.cases[0]?.real).toEqual({ trials: 2, passes: 1, passAt1: 0.5, passHatK: 0 });
    expect(results.summary).toMatchObject({ passAt1: 0.5, passHatK: 0 });
    expect(results.cases[0]?.samples.map((sample) => sample.verdict)).toEqual(['pass', 'fail']);
    // Relaxed: nothing is compared with the script (the fake model's usage differs from it).
    expect(results.cases[0]?.samples[0]?.scores.some((score) => score.assertion === 'tokens equal the script')).toBe(false);
  });

  it('refuses real and record modes without a configured model, saying what to set', async () => {
    await expect(realSettings({ env: {}, workDir: tmpdir() })).rejects.toThrow(/no model is configured: set OPENAI_API_KEY/);
    expect((await realSettings({ env: { OPENAI_API_KEY: 'k', OPENAI_MODEL: 'm1' }, workDir: tmpdir(), model: 'm2' })).model).toBe('m2');
    await expect(recordCase(await suiteCase('retry-after-429'), { settings: { ...defaultSettings, apiKey: 'k', baseUrl: undefined, approval: 'ask' }, env: {} }))
      .rejects.toThrow(/case "retry-after-429" cannot be recorded/);
  });
});
