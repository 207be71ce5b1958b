import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeOpenAIServer, type FakeTurn } from '@claw/testing/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser, screenshotPath } from './browser.js';
import { ServerProcess, killServers, serverEnv } from './process.js';

// WEB-6: the web console in a real browser (Debian's Chromium through playwright-core) against
// the real, built claw-server, whose model is the fake OpenAI-compatible server below.

interface ChatMessage {
  role: string;
  content?: string | null;
}

interface ChatRequest {
  messages: ChatMessage[];
  tools?: unknown[];
}

/** The notes the fake model writes when claw asks it to summarise (CMP-2), with markup in them. */
const handOffNotes = 'Goal: answer three prompts.\nDone so far: all <b>three</b> answered.';

/**
 * claw's summary call (CMP-2): no tools, and claw's hand-off instructions as its system message
 * (with what the user asked the notes to keep, after `/compact <focus>`).
 */
function summaryFocus(request: ChatRequest): string | undefined {
  const system = request.messages[0];
  if ((request.tools ?? []).length > 0 || system?.role !== 'system') return undefined;
  if (!(system.content ?? '').startsWith('You write hand-off notes')) return undefined;
  return /keep in particular: (.*)$/.exec(system.content ?? '')?.[1] ?? '';
}

/** The model's answer, from the conversation it is sent (each scenario has its own prompt). */
function reply(body: unknown): FakeTurn {
  const request = body as ChatRequest;
  const focus = summaryFocus(request);
  if (focus !== undefined) return { text: `${handOffNotes}\nKept in particular: ${focus}.` };
  const messages = request.messages;
  const last = messages.at(-1);
  const prompt = [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
  if (last?.role === 'tool') {
    if (prompt.startsWith('reload')) return { text: 'finished after the reload', delayMs: 1500 };
    return { textChunks: ['The tool ', 'is done.'], chunkDelayMs: 20 };
  }
  if (prompt.startsWith('compact ')) {
    // Answers long enough that a summary of them is worth a model call.
    const lines = Array.from({ length: 30 }, (_, index) => `Part ${index + 1} of the answer to ${prompt}.\n`);
    return { textChunks: [lines.join('').padEnd(4_000, '.')] };
  }
  if (prompt.startsWith('write')) {
    const args = { path: 'from-the-page.txt', content: 'written from the console\n' };
    return { toolCalls: [{ id: 'call-write', name: 'write_file', arguments: JSON.stringify(args) }] };
  }
  if (prompt.startsWith('long')) {
    return { toolCalls: [{ id: 'call-long', name: 'bash', arguments: JSON.stringify({ command: 'echo warming up; sleep 30' }) }] };
  }
  if (prompt.startsWith('reload')) {
    return { toolCalls: [{ id: 'call-read', name: 'read_file', arguments: JSON.stringify({ path: 'README.md' }) }] };
  }
  if (prompt.startsWith('colour')) {
    const command = "printf '\\033[1;32mall green\\033[0m\\n'";
    return { toolCalls: [{ id: 'call-colour', name: 'bash', arguments: JSON.stringify({ command }) }] };
  }
  if (prompt.startsWith('slow')) return { text: 'at last, an answer', delayMs: 5600 };
  if (prompt.startsWith('think')) {
    return {
      reasoning: ['First, the question.\n', 'Then <b>the</b> answer.\n'],
      reasoningField: 'reasoning',
      textChunks: ['Forty-', 'two.'],
      chunkDelayMs: 20,
      usage: { promptTokens: 18_000, completionTokens: 204, cachedTokens: 12_800 },
    };
  }
  if (prompt.startsWith('stream')) {
    const lines = Array.from({ length: 40 }, (_, index) => `Line ${index + 1} of a long answer.\n`);
    return { textChunks: lines, chunkDelayMs: 25 };
  }
  const words = `You said: ${prompt}. Streaming word by word.`.split(/(?<= )/);
  return { textChunks: words, chunkDelayMs: 25 };
}

const enabled = browserAvailable();
let browser: Browser | undefined;
let model: FakeOpenAIServer | undefined;
let server: ServerProcess | undefined;
let consoleUrl = '';
let httpPort = 0;
const folders: string[] = [];

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-console-'));
  folders.push(made);
  return made;
}

beforeAll(async () => {
  if (!enabled) return;
  browser = await launchBrowser();
  model = await FakeOpenAIServer.start({ turns: (body) => reply(body) });
  const workDir = await folder();
  await writeFile(path.join(workDir, 'README.md'), '# console test\n');
  await writeFile(path.join(workDir, 'AGENTS.md'), 'Answer briefly.\n');
  // A stored session the server cannot read: the list names it apart, with why.
  await mkdir(path.join(workDir, '.claw', 'sessions'), { recursive: true });
  await writeFile(path.join(workDir, '.claw', 'sessions', 'damaged-one.jsonl'), 'scribbled over\n');
  const portFile = path.join(await folder(), 'ports.json');
  server = new ServerProcess(
    ['--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, '--shutdown-grace-ms', '0'],
    { env: serverEnv({ OPENAI_API_KEY: 'test', OPENAI_BASE_URL: model.baseURL }), cwd: workDir },
  );
  httpPort = (await server.ports(portFile)).http;
  consoleUrl = `http://127.0.0.1:${httpPort}/#token=${server.token()}`;
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

/** A fresh browser context (own sessionStorage) on the console URL; notes every page error. */
async function openConsole(url = consoleUrl): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  // Nothing the page does may be an error in its console (a CSP violation, a failed request).
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  // No request may leave this server (no CDN fonts or scripts).
  page.on('request', (request) => {
    const target = new URL(request.url());
    if (target.host !== `127.0.0.1:${httpPort}`) errors.push(`external request: ${request.url()}`);
  });
  (page as Page & { clawErrors?: string[] }).clawErrors = errors;
  pages.push(page);
  await page.goto(url);
  return page;
}

function pageErrors(page: Page): string[] {
  return (page as Page & { clawErrors?: string[] }).clawErrors ?? [];
}

async function newSession(page: Page): Promise<string> {
  const before = await page.locator('section[aria-label^="Session "]').count();
  await page.getByRole('button', { name: 'New session' }).click();
  const sections = page.locator('section[aria-label^="Session "]');
  await expect.poll(() => sections.count()).toBe(before + 1);
  const label = await sections.nth(before).getAttribute('aria-label');
  return (label ?? '').replace(/^Session /, '');
}

function session(page: Page, id: string) {
  return page.getByRole('region', { name: `Session ${id}` });
}

/**
 * Presses Tab until the focused element has this accessible text (its aria-label, else its
 * text): keyboard-only use. Fails after 40 presses.
 */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let presses = 0; presses < 40; presses += 1) {
    await page.keyboard.press('Tab');
    const focused = page.locator('*:focus');
    if ((await focused.count()) !== 1) continue;
    const label = (await focused.getAttribute('aria-label')) ?? (await focused.textContent());
    if (label === name) return;
  }
  throw new Error(`nothing named ${JSON.stringify(name)} could be reached with Tab`);
}

async function prompt(page: Page, id: string, text: string): Promise<void> {
  const panel = session(page, id);
  await panel.getByRole('textbox', { name: 'Message' }).fill(text);
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
}

/** In a new session: sends `text`, whose reply is one bash call, and allows it once. */
async function runBash(page: Page, text: string): Promise<string> {
  const id = await newSession(page);
  await prompt(page, id, text);
  const card = session(page, id).getByRole('group', { name: 'Approval for bash' });
  await card.waitFor({ timeout: 10_000 });
  await card.getByRole('button', { name: 'Allow once' }).click();
  return id;
}

/** The bash call of a session: its result and its progress line. */
function bashCall(page: Page, id: string) {
  const call = session(page, id).getByTestId('tool-call').filter({ hasText: 'bash' });
  return { result: call.getByTestId('tool-result'), progress: call.getByTestId('tool-progress') };
}

describe.skipIf(!enabled)('the web console in Chromium (WEB-1 to WEB-6)', () => {
  it('opens with the token, runs two sessions side by side, text streams into each', async () => {
    const page = await openConsole();
    await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('connected');
    // The token left the address bar (it stays in sessionStorage).
    expect(page.url()).not.toContain('token=');
    const first = await newSession(page);
    const second = await newSession(page);
    expect(first).not.toBe(second);
    await prompt(page, first, 'alpha');
    await prompt(page, second, 'beta');
    for (const [id, word] of [[first, 'alpha'], [second, 'beta']] as const) {
      const panel = session(page, id);
      await expect.poll(() => panel.getByTestId('assistant-message').last().textContent(), { timeout: 10_000 })
        .toContain(`You said: ${word}. Streaming word by word.`);
      await expect.poll(() => panel.getByTestId('task-state').textContent()).toBe('completed');
      // What the task did, as the terminal says it.
      await expect.poll(() => panel.getByTestId('notice').last().textContent())
        .toMatch(/^1 model call · 0 tool calls · 15 tokens · cost unpriced · \d+\.\d s$/);
      // Each panel shows only its own session's conversation.
      const other = word === 'alpha' ? 'beta' : 'alpha';
      expect(await panel.getByRole('log').textContent()).not.toContain(`You said: ${other}`);
    }
    const list = page.getByRole('list', { name: 'Sessions' });
    await expect.poll(() => list.getByRole('listitem').filter({ hasText: first }).textContent()).toContain('idle');
    // Each listed with its title: its first prompt.
    for (const [id, word] of [[first, 'alpha'], [second, 'beta']] as const) {
      expect(await list.getByRole('listitem').filter({ hasText: id }).locator('.session-title').textContent()).toBe(word);
      expect(await session(page, id).getByTestId('session-title').textContent()).toBe(word);
    }
    await page.screenshot({ path: await screenshotPath('two-sessions') });
    expect(pageErrors(page)).toEqual([]);
  });

  it('a reasoning model: its thinking folded and dimmed before the answer, cached tokens and the instruction files shown (REAL-2, REAL-4, REAL-5)', async () => {
    const page = await openConsole();
    const id = await newSession(page);
    const panel = session(page, id);
    await expect.poll(() => panel.getByTestId('instructions').textContent()).toBe('instructions: AGENTS.md (16 B)');
    await prompt(page, id, 'think about it');
    await expect.poll(() => panel.getByTestId('task-state').textContent(), { timeout: 10_000 }).toBe('completed');
    const thinking = panel.getByTestId('thinking');
    expect(await thinking.count()).toBe(1);
    // Folded: its summary line shows, its text does not until it is opened.
    expect(await thinking.getAttribute('open')).toBeNull();
    expect(await thinking.locator('summary').textContent()).toMatch(/^thought \(2 lines\)$/);
    await thinking.locator('summary').click();
    // The model's text as text: the tag is shown, not made bold.
    expect(await thinking.textContent()).toContain('Then <b>the</b> answer.');
    expect(await thinking.locator('b').count()).toBe(0);
    // Before the answer, which holds none of the thinking.
    const answer = panel.getByTestId('assistant-message').last();
    expect(await answer.textContent()).toContain('Forty-two.');
    expect(await answer.textContent()).not.toContain('the question');
    const [thinkingBox, answerBox] = [await thinking.boundingBox(), await answer.boundingBox()];
    expect(thinkingBox?.y ?? Infinity).toBeLessThan(answerBox?.y ?? -Infinity);
    await expect.poll(() => panel.getByTestId('figures').textContent()).toContain('18,204 (12,800 cached)');
    await expect.poll(() => panel.getByTestId('notice').last().textContent())
      .toMatch(/^1 model call · 0 tool calls · 18,204 tokens \(12,800 cached\) · cost unpriced · \d+\.\d s$/);
    expect(pageErrors(page)).toEqual([]);
  });

  it('/compact typed in the page compacts the conversation: a divider with the summary, folded, and the task\'s end line (CMP-5)', async () => {
    const page = await openConsole();
    const id = await newSession(page);
    const panel = session(page, id);
    const answers = panel.getByTestId('assistant-message');
    for (const [index, word] of ['one', 'two', 'three'].entries()) {
      await prompt(page, id, `compact ${word}`);
      await expect.poll(() => answers.count(), { timeout: 10_000 }).toBe(index + 1);
      await expect.poll(() => answers.last().getAttribute('aria-busy')).toBe('false');
      await expect.poll(() => panel.getByTestId('task-state').textContent()).toBe('completed');
    }
    expect(await panel.getByRole('textbox', { name: 'Message' }).getAttribute('placeholder')).toContain('/compact [what to keep]');

    await prompt(page, id, '/compact keep the API');
    const divider = panel.getByTestId('compaction');
    await divider.waitFor({ timeout: 10_000 });
    expect(await panel.getByTestId('user-message').last().textContent()).toContain('/compact keep the API');
    expect(await divider.locator('.compaction-line').textContent())
      .toMatch(/^context compacted \(manual\): [\d,]+ → [\d,]+ tokens · \d+ messages summarised$/);
    // Folded: the summary opens on demand, and shows the model's text as text.
    const details = divider.locator('details');
    expect(await details.getAttribute('open')).toBeNull();
    expect(await divider.locator('.compaction-summary').isVisible()).toBe(false);
    await details.locator('summary').click();
    expect(await details.getAttribute('open')).not.toBeNull();
    const summary = divider.locator('.compaction-summary');
    expect(await summary.isVisible()).toBe(true);
    expect(await summary.textContent()).toBe(`${handOffNotes}\nKept in particular: keep the API.`);
    expect(await summary.locator('b').count()).toBe(0);
    expect(await divider.locator('.compaction-error').count()).toBe(0);
    // The divider is a rule across the conversation.
    const [line, log] = [await divider.boundingBox(), await panel.getByRole('log').boundingBox()];
    expect(line?.width ?? 0).toBeGreaterThan((log?.width ?? Infinity) * 0.8);

    // The task's end line counts the summary call and the compaction.
    await expect.poll(() => panel.getByTestId('task-state').textContent(), { timeout: 10_000 }).toBe('completed');
    await expect.poll(() => panel.getByTestId('notice').last().textContent())
      .toMatch(/^1 model call \(1 to summarise\) · 0 tool calls · [\d,]+ tokens · context compacted once · cost unpriced · \d+\.\d s$/);
    await page.screenshot({ path: await screenshotPath('compacted') });

    // Opened anew elsewhere, the session's history puts the divider back, with the summary.
    const other = await openConsole();
    await other.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: `Open ${id}` }).click();
    const rebuilt = session(other, id).getByTestId('compaction');
    await rebuilt.waitFor({ timeout: 10_000 });
    expect(await rebuilt.locator('.compaction-line').textContent()).toMatch(/^context compacted: /);
    await rebuilt.locator('summary').click();
    expect(await rebuilt.locator('.compaction-summary').textContent()).toContain('Kept in particular: keep the API.');
    const otherAnswers = session(other, id).getByTestId('assistant-message');
    expect(await otherAnswers.count()).toBe(3);
    const [first, divided, last] = [
      await otherAnswers.first().boundingBox(),
      await rebuilt.boundingBox(),
      await otherAnswers.last().boundingBox(),
    ];
    expect(first?.y ?? Infinity).toBeLessThan(divided?.y ?? -Infinity);
    expect(divided?.y ?? Infinity).toBeLessThan(last?.y ?? -Infinity);
    expect(pageErrors(page)).toEqual([]);
    expect(pageErrors(other)).toEqual([]);
  });

  it('names a stored session the server cannot read below the list, with why, apart from the sessions', async () => {
    const page = await openConsole();
    await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('connected');
    const unreadable = page.getByRole('region', { name: 'Sessions that cannot be read' });
    await expect.poll(() => unreadable.textContent()).toContain('damaged-one');
    expect(await unreadable.textContent()).toContain('damaged-one.jsonl is corrupt at line 1');
    expect(await page.getByRole('list', { name: 'Sessions' }).textContent()).not.toContain('damaged-one');
    await page.screenshot({ path: await screenshotPath('unreadable-session') });
    expect(pageErrors(page)).toEqual([]);
  });

  it('an approval card appears in the turn; allow once runs the tool and its result shows', async () => {
    const page = await openConsole();
    const id = await newSession(page);
    await prompt(page, id, 'write a file');
    const card = session(page, id).getByRole('group', { name: 'Approval for write_file' });
    await card.waitFor({ timeout: 10_000 });
    expect(await card.textContent()).toContain('from-the-page.txt');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('awaiting approval');
    await page.screenshot({ path: await screenshotPath('approval-card') });
    await card.getByRole('button', { name: 'Allow once' }).click();
    await expect.poll(() => card.textContent()).toMatch(/allow_once by ws-\d+/);
    expect(await card.getByRole('button').count()).toBe(0);
    const result = session(page, id).getByTestId('tool-call').filter({ hasText: 'write_file' }).getByTestId('tool-result');
    await expect.poll(() => result.textContent(), { timeout: 10_000 }).toContain('from-the-page.txt');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('completed');
    expect(pageErrors(page)).toEqual([]);
  });

  it('a command\'s colour codes are left out of its output in the page', async () => {
    const page = await openConsole();
    const id = await runBash(page, 'colour please');
    const { result } = bashCall(page, id);
    await expect.poll(() => result.textContent(), { timeout: 10_000 }).toContain('all green');
    // eslint-disable-next-line no-control-regex -- the escape character must not be in the page
    expect(await result.textContent()).not.toMatch(/\[1;32m|\[0m|\u001b/);
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('completed');
  });

  it('a model silent for 5 s: the panel says it waits for it, counting, until the answer comes', async () => {
    const page = await openConsole();
    const id = await newSession(page);
    await prompt(page, id, 'slow answer');
    const wait = session(page, id).getByTestId('model-wait');
    await wait.waitFor({ timeout: 10_000 });
    expect(await wait.textContent()).toMatch(/^… waiting for the model: 5 s so far$/);
    await expect.poll(() => session(page, id).getByTestId('assistant-message').last().textContent(), { timeout: 10_000 })
      .toContain('at last, an answer');
    expect(await wait.count()).toBe(0);
  });

  it('a long tool shows its progress while it runs; interrupted, the task shows canceled', async () => {
    const page = await openConsole();
    const id = await runBash(page, 'long job');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('running');
    // bash says how it is doing every 5 s: the page shows the latest under the call.
    const { result, progress } = bashCall(page, id);
    await progress.waitFor({ timeout: 15_000 });
    expect(await progress.textContent()).toMatch(/^running for \d+(\.\d)?s; last output: "warming up"$/);
    await session(page, id).getByRole('button', { name: 'Interrupt' }).click();
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent(), { timeout: 10_000 }).toBe('canceled');
    expect(await result.getAttribute('data-error')).toBe('true');
    // The call ended: its progress is gone.
    expect(await progress.count()).toBe(0);
    await page.screenshot({ path: await screenshotPath('canceled') });
  });

  it('a reload mid-task: the task is still running and finishes in the page; nothing shows twice', async () => {
    const page = await openConsole();
    const id = await newSession(page);
    await prompt(page, id, 'reload test');
    // The read runs, then the model takes 1.5 s for its answer: reload meanwhile.
    await session(page, id).getByTestId('tool-result').first().waitFor({ timeout: 10_000 });
    await page.reload();
    await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('connected');
    await expect.poll(() => session(page, id).getByTestId('assistant-message').last().textContent(), { timeout: 10_000 })
      .toContain('finished after the reload');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('completed');
    expect(await session(page, id).getByTestId('user-message').count()).toBe(1);
    expect(await session(page, id).getByTestId('tool-call').count()).toBe(1);
    expect(pageErrors(page)).toEqual([]);
  });

  it('a second tab on the same session sees the same events and the card resolved by the first', async () => {
    const first = await openConsole();
    const id = await newSession(first);
    const second = await openConsole();
    await second.getByRole('list', { name: 'Sessions' }).getByRole('button', { name: `Open ${id}` }).click();
    await session(second, id).waitFor();
    await prompt(first, id, 'write again');
    const cardInSecond = session(second, id).getByRole('group', { name: 'Approval for write_file' });
    await cardInSecond.waitFor({ timeout: 10_000 });
    await session(first, id).getByRole('group', { name: 'Approval for write_file' }).getByRole('button', { name: 'Allow once' }).click();
    await expect.poll(() => cardInSecond.textContent()).toMatch(/allow_once by ws-\d+/);
    expect(await cardInSecond.getByRole('button').count()).toBe(0);
    await expect.poll(() => session(second, id).getByTestId('task-state').textContent(), { timeout: 10_000 }).toBe('completed');
    await second.screenshot({ path: await screenshotPath('second-tab') });
  });

  it('keyboard only, in a narrow window: new session, prompt, approve, Esc interrupts; the composer stays put while text streams', async () => {
    const page = await openConsole();
    await page.setViewportSize({ width: 420, height: 800 });
    await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('connected');
    await tabTo(page, 'New session');
    await page.keyboard.press('Enter');
    const sections = page.locator('section[aria-label^="Session "]');
    await expect.poll(() => sections.count()).toBe(1);
    const id = ((await sections.first().getAttribute('aria-label')) ?? '').replace(/^Session /, '');
    await tabTo(page, 'Message');
    await page.keyboard.type('stream a long answer');
    const composer = session(page, id).getByRole('textbox', { name: 'Message' });
    const before = await composer.boundingBox();
    await page.keyboard.press('Enter');
    // While the answer streams in, the composer does not move (no layout jump).
    const bubble = session(page, id).getByTestId('assistant-message').last();
    await bubble.waitFor({ timeout: 10_000 });
    const positions: number[] = [];
    while ((await bubble.getAttribute('aria-busy')) === 'true' && positions.length < 40) {
      positions.push((await composer.boundingBox())?.y ?? -1);
      await page.waitForTimeout(20);
    }
    expect(positions.length).toBeGreaterThan(1);
    expect(new Set(positions)).toEqual(new Set([before?.y]));
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('completed');
    await page.screenshot({ path: await screenshotPath('narrow-window') });

    await composer.focus();
    await page.keyboard.type('long job');
    await page.keyboard.press('Enter');
    const card = session(page, id).getByRole('group', { name: 'Approval for bash' });
    await card.waitFor({ timeout: 10_000 });
    await tabTo(page, 'Allow once');
    await page.keyboard.press('Enter');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent()).toBe('running');
    await page.keyboard.press('Escape');
    await expect.poll(() => session(page, id).getByTestId('task-state').textContent(), { timeout: 10_000 }).toBe('canceled');
    expect(pageErrors(page)).toEqual([]);
  });

  it('a wrong token shows the explanation, not a blank page', async () => {
    const page = await openConsole(`http://127.0.0.1:${httpPort}/#token=not-the-token-at-all`);
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 10_000 });
    expect(await alert.textContent()).toMatch(/token/i);
    // Where a generated token is kept (outside the workspace), and that a given one is not shown.
    expect(await alert.textContent()).toContain('~/.local/state/claw/servers/');
    expect(await alert.textContent()).toContain('token_file');
    expect(await alert.textContent()).toContain('is never printed');
    await expect.poll(() => page.getByTestId('connection-status').textContent()).toBe('unauthorized');
    await page.screenshot({ path: await screenshotPath('wrong-token') });
    const none = await openConsole(`http://127.0.0.1:${httpPort}/`);
    await none.getByRole('alert').waitFor();
    expect(await none.getByRole('alert').textContent()).toMatch(/token/i);
  });
});
