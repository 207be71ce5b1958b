// An MCP server's request for input (MCP-7) in the built claw: the REPL asks the form's fields on
// its own input (piped here); `-p` without a terminal declines with a note; stream-json shows the
// request and how it ended as events. The server is a real SDK server on stdio that asks during
// its `ask` tool and answers with what it got.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FakeOpenAIServer } from '@claw/testing/node';
import { afterEach, describe, expect, it } from 'vitest';
import { ClawProcess, cleanUp, messagesOf, modelEnv, parseEvents, tempDir } from './helpers.js';
import { elicitServerLaunch } from '../../../packages/runtime/test/fixtures/elicit-server-launch.mjs';

let server: FakeOpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanUp();
});

const askServer = {
  ...elicitServerLaunch(),
  // Its tool asks nothing of the approval gate: the request for input is what is tested.
  risk: 'safe',
};

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2 },
    count: { type: 'integer', minimum: 1, default: 3 },
    colour: { type: 'string', enum: ['red', 'green'] },
  },
  required: ['name'],
};

async function workspace(): Promise<string> {
  const workDir = await tempDir();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
  return workDir;
}

async function askingModel(): Promise<FakeOpenAIServer> {
  server = await FakeOpenAIServer.start({
    turns: [
      { toolCalls: [{ name: 'mcp_sdk_ask', arguments: JSON.stringify({ message: 'Who are you?', requestedSchema: form }) }] },
      { text: 'thanks' },
    ],
  });
  return server;
}

/** What the server's tool answered (what it got back), as the model was told. */
function toolAnswer(model: FakeOpenAIServer): unknown {
  const tool = messagesOf(model.requests[1]).find((message) => message.role === 'tool');
  return JSON.parse(String(tool?.content));
}

/** Types each line, then waits until claw has shown what should follow it (`times` in all). */
async function converse(claw: ClawProcess, steps: Array<[line: string, shown: string, times?: number]>) {
  for (const [line, shown, times] of steps) {
    claw.send(line);
    await claw.waitFor(shown, times);
  }
}

describe('requests for input of MCP servers (MCP-7)', () => {
  it('the REPL asks each field, re-asks what does not fit, and sends the checked form', async () => {
    const model = await askingModel();
    const workDir = await workspace();
    const claw = ClawProcess.start(['--workdir', workDir, '--trust-workspace'], { env: modelEnv(model.baseURL) });
    await claw.waitFor('claw> ');
    claw.send('who am I?');
    await claw.waitFor('[f] fill in  [d] decline  [c] cancel > ');
    expect(claw.stdout).toContain('MCP server "sdk" asks for input\n  Who are you?\n  (a form of 3 fields)');
    await converse(claw, [
      ['maybe', 'answer f, d or c'],
      ['f', 'Your name (text, required) > '],
      ['', 'this field is required'],
      ['A', 'count (a whole number, default 3) > '],
      ['two', 'type a number'],
      ['', 'colour (text, one of red, green) > '],
      ['blue', 'choose one of the list'],
      // "A" is shorter than the form allows: the fields are asked again.
      ['2', 'the answer does not fit the form'],
    ]);
    await claw.waitFor('Your name (text, required) > ', 3);
    await converse(claw, [
      ['Ada', 'count (a whole number, default 3) > ', 2],
      ['5', 'colour (text, one of red, green) > ', 3],
      ['red', 'sent'],
    ]);
    await claw.waitFor('thanks');
    expect(toolAnswer(model)).toEqual({ action: 'accept', content: { name: 'Ada', count: 5, colour: 'red' } });
    await claw.waitFor('claw> ', 2);
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });

  it('the REPL declines when the user says d', async () => {
    const model = await askingModel();
    const workDir = await workspace();
    const claw = ClawProcess.start(['--workdir', workDir, '--trust-workspace'], { env: modelEnv(model.baseURL) });
    await claw.waitFor('claw> ');
    claw.send('who am I?');
    await claw.waitFor('[f] fill in  [d] decline  [c] cancel > ');
    claw.send('d');
    await claw.waitFor('thanks');
    expect(claw.stdout).toContain('declined');
    expect(toolAnswer(model)).toEqual({ action: 'decline' });
    claw.send('/exit');
    expect(await claw.exited).toBe(0);
  });

  it('-p without a terminal declines at once, with a note on stderr', async () => {
    const model = await askingModel();
    const workDir = await workspace();
    const result = await ClawProcess.run(['-p', 'who am I?', '--workdir', workDir, '--trust-workspace'], {
      env: modelEnv(model.baseURL),
    });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('thanks');
    expect(result.stderr).toContain(
      'claw: declined the request for input of MCP server "sdk": there is no terminal to ask on.',
    );
    expect(toolAnswer(model)).toEqual({ action: 'decline' });
  });

  it('-p --output stream-json shows the request and its end as events', async () => {
    const model = await askingModel();
    const workDir = await workspace();
    const result = await ClawProcess.run(
      ['-p', 'who am I?', '--workdir', workDir, '--trust-workspace', '--output', 'stream-json'],
      { env: modelEnv(model.baseURL) },
    );
    expect(result.status).toBe(0);
    const events = parseEvents(result.stdout);
    const request = events.find((event) => event.type === 'elicitation_request');
    expect(request).toMatchObject({ server: 'sdk', message: 'Who are you?', requested_schema: form });
    expect(events.find((event) => event.type === 'elicitation_resolved')).toMatchObject({
      request_id: (request as { request_id: string }).request_id,
      action: 'decline',
      by: 'terminal',
    });
    expect(toolAnswer(model)).toEqual({ action: 'decline' });
  });
});
