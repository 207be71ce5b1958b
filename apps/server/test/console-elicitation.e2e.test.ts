// MCP-7 in the web console, in a real browser (Debian's Chromium through playwright-core) against
// the real, built claw-server: a workspace's MCP server (the SDK's, on stdio) asks the user for
// input during its `ask` tool; the page shows the form, checks it, sends the answer, and the card
// gives way to how the request ended. The server's tool answers with what it got back, which the
// fake model is sent: that is what the tests check.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser, screenshotPath } from './browser.js';
import { ServerProcess, killServers, serverEnv } from './process.js';
import { elicitServerLaunch } from '../../../packages/runtime/test/fixtures/elicit-server-launch.mjs';

const askServer = {
  ...elicitServerLaunch(),
  // The approval gate is not what is tested here.
  risk: 'safe',
};

const form = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', description: 'As on your badge', minLength: 2 },
    email: { type: 'string', title: 'Email', format: 'email' },
    count: { type: 'integer', title: 'How many', minimum: 1, maximum: 9, default: 3 },
    colour: { type: 'string', title: 'Colour', oneOf: [{ const: 'r', title: 'Red' }, { const: 'g', title: 'Green' }] },
    sure: { type: 'boolean', title: 'Sure?' },
    tags: { type: 'array', title: 'Tags', items: { type: 'string', enum: ['x', 'y', 'z'] }, maxItems: 2 },
  },
  required: ['name', 'colour'],
};

interface ChatRequest {
  messages: Array<{ role: string; content?: string | null }>;
}

/** The model: a prompt calls the server's `ask` tool with the form; its result ends the task. */
function reply(body: unknown): FakeTurn {
  const { messages } = body as ChatRequest;
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: 'thanks for the answer' };
  const prompt = last?.content ?? '';
  const args = { message: `Who are you? (${prompt})`, requestedSchema: form };
  return { toolCalls: [{ id: `call-${prompt}`, name: 'mcp_sdk_ask', arguments: JSON.stringify(args) }] };
}

const enabled = browserAvailable();
let browser: Browser | undefined;
let model: FakeOpenAIServer | undefined;
let consoleUrl = '';
const folders: string[] = [];

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-console-input-'));
  folders.push(made);
  return made;
}

beforeAll(async () => {
  if (!enabled) return;
  browser = await launchBrowser();
  model = await FakeOpenAIServer.start({ turns: (body) => reply(body) });
  const workDir = await folder();
  await mkdir(path.join(workDir, '.claw'));
  await writeFile(path.join(workDir, '.claw', 'mcp.json'), JSON.stringify({ mcpServers: { sdk: askServer } }));
  const portFile = path.join(await folder(), 'ports.json');
  const server = new ServerProcess(
    [
      '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile,
      '--shutdown-grace-ms', '0', '--trust-workspace',
    ],
    { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd: workDir },
  );
  const { http } = await server.ports(portFile);
  consoleUrl = `http://127.0.0.1:${http}/#token=${server.token()}`;
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await killServers();
  await model?.close();
  for (const made of folders) await rm(made, { recursive: true, force: true });
});

const pages: Page[] = [];
afterEach(async () => {
  for (const page of pages.splice(0)) await page.context().close();
});

async function openConsole(): Promise<{ page: Page; errors: string[] }> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  pages.push(page);
  await page.goto(consoleUrl);
  await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('connected');
  return { page, errors };
}

/** A new session, sent `text`: the server asks for input; its card. */
async function asked(page: Page, text: string) {
  const sections = page.locator('section[aria-label^="Session "]');
  const before = await sections.count();
  await page.getByRole('button', { name: 'New session' }).click();
  await expect.poll(() => sections.count()).toBe(before + 1);
  const panel = sections.nth(before);
  await panel.getByRole('textbox', { name: 'Message' }).fill(text);
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  const card = panel.getByRole('group', { name: 'Request for input from MCP server "sdk"' });
  await card.waitFor({ timeout: 15_000 });
  return { panel, card };
}

/** What the MCP server got back for the call made for `text`, as its tool told the model. */
async function serverGot(text: string): Promise<unknown> {
  const answered = () => model?.requests
    .map((recorded) => (recorded.body as ChatRequest).messages)
    .find((messages) => messages.some((message) => message.role === 'user' && message.content === text) &&
      messages.at(-1)?.role === 'tool');
  await expect.poll(() => answered() !== undefined, { timeout: 10_000 }).toBe(true);
  return JSON.parse(answered()?.at(-1)?.content ?? 'null');
}

describe.skipIf(!enabled)('requests for input of MCP servers in the console (MCP-7)', () => {
  it('shows the form, says what to fix, and sends the filled-in form by keyboard; the server gets it', async () => {
    const { page, errors } = await openConsole();
    const { panel, card } = await asked(page, 'fill it in');
    expect(await card.textContent()).toContain('Who are you? (fill it in)');
    await expect.poll(() => panel.getByTestId('task-state').textContent()).toBe('awaiting approval');
    const name = card.getByLabel('Your name');
    expect(await card.getByLabel('How many').inputValue()).toBe('3');
    await page.screenshot({ path: await screenshotPath('elicitation-form') });

    // Accept with the required fields empty: each says what is wrong, the first takes the focus.
    await card.getByRole('button', { name: 'Accept' }).click();
    expect(await card.locator('.field-error').allTextContents()).toEqual([
      'This field is required.',
      'This field is required.',
    ]);
    const focused = page.locator('*:focus');
    await expect.poll(() => focused.getAttribute('id')).toBe(await name.getAttribute('id'));
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect(await card.getByRole('alert').textContent()).toBe('2 fields need fixing before the form can be sent.');

    // Keyboard only from here: type, Tab between the fields, Space on checkboxes, Enter sends.
    await page.keyboard.type('A');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-an-address');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('12');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    // Past the other tags to Accept.
    for (let presses = 0; presses < 3; presses += 1) await page.keyboard.press('Tab');
    expect(await focused.textContent()).toBe('Accept');
    await page.keyboard.press('Enter');
    expect(await card.locator('.field-error').allTextContents()).toEqual([
      'Enter at least 2 characters.',
      'Enter an email address, like name@example.com.',
      'Enter a number from 1 to 9.',
    ]);
    expect(await card.getByLabel('Colour').inputValue()).toBe('g');
    await name.fill('Ada');
    await card.getByLabel('Email').fill('ada@example.com');
    await card.getByLabel('How many').fill('5');
    await card.getByLabel('z', { exact: true }).check();
    await card.getByLabel('How many').press('Enter');

    // The card gives way to how the request ended; the server got exactly what was entered.
    await expect.poll(() => card.getByTestId('elicitation-outcome').textContent(), { timeout: 10_000 })
      .toMatch(/^Request for input from MCP server "sdk": answered by /);
    expect(await card.locator('form').count()).toBe(0);
    expect(await serverGot('fill it in')).toEqual({
      action: 'accept',
      content: { name: 'Ada', email: 'ada@example.com', count: 5, colour: 'g', sure: true, tags: ['x', 'z'] },
    });
    await expect.poll(() => panel.getByTestId('assistant-message').last().textContent())
      .toContain('thanks for the answer');
    await page.screenshot({ path: await screenshotPath('elicitation-answered') });
    expect(errors).toEqual([]);
  });

  it('declines or cancels with a button; the server is told which', async () => {
    const { page, errors } = await openConsole();
    for (const [text, button, action, outcome] of [
      ['say no', 'Decline', 'decline', /: declined by /],
      ['go away', 'Cancel', 'cancel', /: dismissed by /],
    ] as const) {
      const { card } = await asked(page, text);
      await card.getByRole('button', { name: button }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => card.getByTestId('elicitation-outcome').textContent(), { timeout: 10_000 })
        .toMatch(outcome);
      expect(await serverGot(text)).toEqual({ action });
    }
    expect(errors).toEqual([]);
  });
});
