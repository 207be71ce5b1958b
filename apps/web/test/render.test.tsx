// The new parts of a session's panel as the page renders them (static markup, no browser): the
// model's thinking folded, dimmed and as text; the project instructions in the header; the
// divider where the conversation was compacted; the composer's help.
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ConsoleController } from '../src/console-controller.js';
import { ControllerContext } from '../src/components/controller-context.js';
import { SessionPanel } from '../src/components/SessionPanel.js';
import type { ConsoleState } from '../src/state/types.js';
import {
  SessionScript,
  history,
  prompted,
  receive,
  sessionOpened,
  view,
  withFreshSession,
} from './fixtures.js';
import { MemoryStorage } from './storage.js';

function panel(state: ConsoleState, id: string): string {
  const controller = new ConsoleController({
    storage: new MemoryStorage(),
    location: { protocol: 'http:', host: '127.0.0.1:8081' },
  });
  return renderToStaticMarkup(
    <ControllerContext.Provider value={controller}>
      <SessionPanel view={view(state, id)} connection={state.connection} />
    </ControllerContext.Provider>,
  );
}

/** The outer markup of each element with this data-testid (none of them nest their own tag). */
function found(markup: string, testId: string): string[] {
  const opening = new RegExp(`<(\\w+)[^>]*data-testid="${testId}"[^>]*>`, 'g');
  return [...markup.matchAll(opening)].map((match) => {
    const closing = `</${match[1] ?? ''}>`;
    return markup.slice(match.index, markup.indexOf(closing, match.index) + closing.length);
  });
}

describe('a thinking block on the page', () => {
  it('is folded to its one-line summary, dimmed apart from the answer, and shows the model\'s text as text', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('thinking', { turn: 1 }),
      s1.event('thinking_delta', { content: 'Is <img src=x onerror=alert(1)> safe?' }),
    );
    const [streaming, ...more] = found(panel(state, 's1'), 'thinking');
    expect(more).toEqual([]);
    expect(streaming).toMatch(/^<details [^>]*class="thinking"/);
    // Folded: no `open` attribute until the reader opens it.
    expect(streaming).not.toMatch(/^<details [^>]*\bopen\b/);
    expect(streaming).toContain('<summary>thinking… (37 characters)</summary>');
    expect(streaming).toContain('Is &lt;img src=x onerror=alert(1)&gt; safe?');
    expect(streaming).not.toContain('<img');

    state = receive(state, s1.event('text_delta', { content: 'Yes.' }));
    const markup = panel(state, 's1');
    expect(found(markup, 'thinking')[0]).toContain('<summary>thought (1 line)</summary>');
    // Before the answer.
    expect(markup.indexOf('data-testid="thinking"')).toBeLessThan(markup.indexOf('data-testid="assistant-message"'));
  });
});

describe('the instructions line in the panel header', () => {
  it('names the files the model is given, and is absent when there are none', () => {
    const opened = receive(
      withFreshSession('s1'),
      sessionOpened('s1', {
        instructions: [
          { path: 'AGENTS.md', bytes: 1229 },
          { path: 'sub/AGENTS.md', bytes: 300, truncated: true },
        ],
      }),
    );
    const markup = panel(opened, 's1');
    const header = markup.slice(markup.indexOf('<header'), markup.indexOf('</header>'));
    expect(found(header, 'instructions')).toEqual([
      expect.stringContaining('>instructions: AGENTS.md (1.2 KB), sub/AGENTS.md (300 B) (cut)</p>'),
    ]);
    expect(found(panel(withFreshSession('s1'), 's1'), 'instructions')).toEqual([]);
  });
});

describe('the divider where the conversation was compacted (CMP-5)', () => {
  it('is a rule across the conversation with one line, the summary folded below it as text', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('context_compacted', {
        reason: 'threshold',
        tokens_before: 15_200,
        tokens_after: 6_100,
        pruned_results: 12,
        summarised_messages: 40,
        summary: 'Keep <script>alert(1)</script> & the API.\nNext: tests.',
      }),
    );
    const markup = panel(state, 's1');
    const [divider, ...more] = found(markup, 'compaction');
    expect(more).toEqual([]);
    expect(divider).toMatch(/^<div [^>]*class="compaction"/);
    expect(divider).toContain(
      '<p class="compaction-line">context compacted (threshold): 15,200 → 6,100 tokens · 12 old tool results pruned · 40 messages summarised</p>',
    );
    // Folded: a native toggle without `open`, the summary in it as text.
    expect(divider).toMatch(/<details class="compaction-details"><summary>summary<\/summary>/);
    expect(divider).not.toMatch(/<details [^>]*\bopen\b/);
    expect(divider).toContain('Keep &lt;script&gt;alert(1)&lt;/script&gt; &amp; the API.\nNext: tests.');
    expect(divider).not.toContain('<script');
    expect(divider).not.toContain('compaction-error');
    // In the conversation (the log), after the prompt.
    const log = markup.slice(markup.indexOf('role="log"'));
    expect(log.indexOf('data-testid="user-message"')).toBeLessThan(log.indexOf('data-testid="compaction"'));
  });

  it('says in red why the summary failed, with nothing to open', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(
      state,
      s1.event('context_compacted', {
        reason: 'overflow',
        tokens_before: 200_000,
        tokens_after: 90_000,
        pruned_results: 0,
        summarised_messages: 7,
        error: 'the model <b>timed</b> out',
      }),
    );
    const [divider] = found(panel(state, 's1'), 'compaction');
    expect(divider).toContain('7 messages left out</p>');
    expect(divider).toContain('<p class="compaction-error">no summary: the model &lt;b&gt;timed&lt;/b&gt; out</p>');
    expect(divider).not.toContain('<details');
  });

  it('rebuilt from a history, stands where its compaction was, with the summary', () => {
    const state = receive(
      withFreshSession('s1'),
      history('s1', 9, [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'one' },
        { role: 'user', content: 'second' },
      ], { up_to: 2, summary: 'First was answered.' }),
    );
    const markup = panel(state, 's1');
    const [divider] = found(markup, 'compaction');
    expect(divider).toContain('<summary>summary</summary><p class="compaction-summary">First was answered.</p>');
    const order = ['>first<', 'data-testid="compaction"', '>second<'].map((text) => markup.indexOf(text));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order).not.toContain(-1);
  });
});

describe('the composer', () => {
  it('says in its placeholder that /compact compacts the conversation', () => {
    const markup = panel(withFreshSession('s1'), 's1');
    expect(markup).toMatch(/<textarea [^>]*placeholder="[^"]*\(\/compact \[what to keep\] compacts the conversation\)"/);
  });
});
