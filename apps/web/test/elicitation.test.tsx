// An MCP server's request for input (MCP-7) in the console: the form read from the requested
// schema and checked before it is sent; the card's state from the session's events and the page's
// own answers; the card as the page renders it (static markup, no browser).
import { parseClientMessage } from '@claw/channel/protocol';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { ConsoleController } from '../src/console-controller.js';
import { ControllerContext } from '../src/components/controller-context.js';
import { SessionPanel } from '../src/components/SessionPanel.js';
import { checkForm, formFields, initialValues } from '../src/elicitation-form.js';
import { reduce } from '../src/state/reducer.js';
import type { ConsoleState, ElicitationItem, ElicitationSchema } from '../src/state/types.js';
import {
  SessionScript,
  errorEvent,
  history,
  prompted,
  receive,
  sessionOpened,
  shown,
  view,
  welcome,
  withFreshSession,
} from './fixtures.js';
import { socketFactory } from './fake-socket.js';
import { MemoryStorage } from './storage.js';

const everyKind: ElicitationSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', description: 'As on your badge', minLength: 2, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    born: { type: 'string', format: 'date' },
    meeting: { type: 'string', format: 'date-time' },
    count: { type: 'integer', minimum: 1, maximum: 9, default: 3 },
    ratio: { type: 'number', minimum: 0 },
    sure: { type: 'boolean', title: 'Sure?', default: true },
    colour: { type: 'string', enum: ['red', 'green'] },
    size: { type: 'string', oneOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
    legacy: { type: 'string', enum: ['a', 'b'], enumNames: ['Alpha', 'Beta'] },
    tags: { type: 'array', items: { type: 'string', enum: ['x', 'y', 'z'] }, minItems: 1, maxItems: 2 },
    titled: { type: 'array', items: { anyOf: [{ const: 'p', title: 'Pears' }] }, default: ['p'] },
    nested: { type: 'object' },
  },
  required: ['name', 'colour', 'tags'],
};

describe('the form of a request for input', () => {
  it('reads every kind of field MCP allows, with titles, descriptions, limits, defaults and required', () => {
    const fields = formFields(everyKind);
    expect(fields.map((field) => [field.name, field.kind, field.required])).toEqual([
      ['name', 'text', true],
      ['email', 'email', false],
      ['site', 'uri', false],
      ['born', 'date', false],
      ['meeting', 'date-time', false],
      ['count', 'integer', false],
      ['ratio', 'number', false],
      ['sure', 'boolean', false],
      ['colour', 'choice', true],
      ['size', 'choice', false],
      ['legacy', 'choice', false],
      ['tags', 'choices', true],
      ['titled', 'choices', false],
      ['nested', 'unsupported', false],
    ]);
    expect(fields[0]).toMatchObject({ label: 'Your name', description: 'As on your badge', minLength: 2, maxLength: 5 });
    expect(fields[5]).toMatchObject({ label: 'count', minimum: 1, maximum: 9, default: 3 });
    expect(fields[9]?.options).toEqual([{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }]);
    expect(fields[10]?.options).toEqual([{ value: 'a', label: 'Alpha' }, { value: 'b', label: 'Beta' }]);
    expect(fields[12]?.options).toEqual([{ value: 'p', label: 'Pears' }]);
    const values = initialValues(fields);
    expect(values).toMatchObject({ name: '', count: '3', sure: true, colour: '', tags: [], titled: ['p'] });
  });

  it('says what to fix for each field, and sends nothing until all fit', () => {
    const fields = formFields({ ...everyKind, properties: { ...everyKind.properties, nested: { type: 'string' } } });
    const bad = checkForm(fields, {
      ...initialValues(fields),
      name: 'A',
      email: 'not-an-address',
      site: 'example',
      born: '1 March',
      meeting: 'soon',
      count: '2.5',
      ratio: '-1',
      colour: 'blue',
      tags: ['x', 'y', 'z'],
    });
    expect(bad).toEqual({
      ok: false,
      errors: {
        name: 'Enter at least 2 characters.',
        email: 'Enter an email address, like name@example.com.',
        site: 'Enter a full address, like https://example.com/.',
        born: 'Enter a date, like 2025-03-01.',
        meeting: 'Enter a date and a time.',
        count: 'Enter a whole number.',
        ratio: 'Enter a number of at least 0.',
        colour: 'Choose one of the options.',
        tags: 'Choose at most 2 options.',
      },
    });
    const empty = checkForm(fields, { ...initialValues(fields), name: '   ' });
    expect(empty.ok ? {} : empty.errors).toEqual({
      name: 'This field is required.',
      colour: 'This field is required.',
      tags: 'Choose at least 1 option.',
    });
    expect(checkForm(fields, { ...initialValues(fields), name: 'Ada', colour: 'red', tags: ['x'], count: '12' }))
      .toEqual({ ok: false, errors: { count: 'Enter a number from 1 to 9.' } });
    expect(checkForm(fields, { ...initialValues(fields), name: 'Ada Lovelace', colour: 'red', tags: ['x'] }))
      .toEqual({ ok: false, errors: { name: 'Enter at most 5 characters.' } });
  });

  it('sends the fields filled in, typed as the schema says; empty optional fields are left out', () => {
    const fields = formFields({ ...everyKind, properties: { ...everyKind.properties, nested: { type: 'string' } } });
    const checked = checkForm(fields, {
      ...initialValues(fields),
      name: 'Ada',
      email: ' ada@example.com ',
      born: '1815-12-10',
      meeting: '2025-03-01T09:30',
      count: '7',
      ratio: '0.5',
      sure: false,
      colour: 'green',
      size: 'l',
      tags: ['y'],
    });
    expect(checked).toEqual({
      ok: true,
      content: {
        name: 'Ada',
        email: 'ada@example.com',
        born: '1815-12-10',
        meeting: new Date('2025-03-01T09:30').toISOString(),
        count: 7,
        ratio: 0.5,
        sure: false,
        colour: 'green',
        size: 'l',
        tags: ['y'],
        titled: ['p'],
      },
    });
  });

  it('leaves out a field the page cannot show, and cannot be sent when that field is required', () => {
    const fields = formFields(everyKind);
    const values = { ...initialValues(fields), name: 'Ada', colour: 'red', tags: ['x'] };
    const checked = checkForm(fields, values);
    expect(checked.ok && Object.keys(checked.content)).toEqual(['name', 'count', 'sure', 'colour', 'tags', 'titled']);
    const strict = formFields({ ...everyKind, required: ['nested'] });
    expect(checkForm(strict, values)).toEqual({
      ok: false,
      errors: { nested: 'This page cannot fill in this field: decline, or answer elsewhere.' },
    });
  });
});

function cardsOf(state: ConsoleState, id = 's1'): ElicitationItem[] {
  return view(state, id).items.filter((item): item is ElicitationItem => item.kind === 'elicitation');
}

describe('the card of a request for input (state)', () => {
  it('appears once per request, takes the page\'s answer, an error, and goes to how it ended', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'who am I?');
    const request = s1.elicitationRequest('input-1');
    state = receive(state, request, request, s1.event('state', { state: 'awaiting_approval' }));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): who am I?', 'input input-1 from sdk']);
    expect(cardsOf(state)[0]).toMatchObject({ message: 'Who are you?', schema: request.requested_schema, seq: request.seq });

    state = reduce(state, { type: 'elicitation_answered', sessionId: 's1', requestId: 'input-1', action: 'accept' });
    expect(cardsOf(state)[0]).toMatchObject({ answering: 'accept' });
    // The server refuses an answer that does not fit: said on the card, which may be sent again.
    state = receive(state, errorEvent({
      code: 'invalid_elicitation_answer',
      message: 'the answer does not fit the form: name is too short',
      session_id: 's1',
      request_id: 'input-1',
    }));
    expect(cardsOf(state)[0]).toMatchObject({ error: 'the answer does not fit the form: name is too short' });
    expect(cardsOf(state)[0]?.answering).toBeUndefined();

    state = reduce(state, { type: 'elicitation_answered', sessionId: 's1', requestId: 'input-1', action: 'decline' });
    state = receive(state, s1.event('elicitation_resolved', { request_id: 'input-1', action: 'decline', by: 'ws-1' }));
    expect(shown(view(state, 's1').items).at(-1)).toBe('input input-1 from sdk: decline by ws-1');
    expect(cardsOf(state)[0]?.error).toBeUndefined();
  });

  it('a request answered elsewhere or timed out resolves the same way; an approval\'s error leaves it alone', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, s1.elicitationRequest('input-1'), s1.approvalRequest('r1'));
    state = receive(state, errorEvent({ code: 'approval_not_pending', message: 'gone', session_id: 's1', request_id: 'r1' }));
    expect(cardsOf(state)[0]?.error).toBeUndefined();
    state = receive(state, s1.event('elicitation_resolved', { request_id: 'input-1', action: 'decline', by: 'timeout' }));
    expect(cardsOf(state)[0]?.resolution).toEqual({ action: 'decline', by: 'timeout' });
  });

  it('comes back after a reload from session_opened (after the history), and only once', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    const request = s1.elicitationRequest('input-1');
    state = receive(state, request);
    state = reduce(state, { type: 'elicitation_answered', sessionId: 's1', requestId: 'input-1', action: 'accept' });
    // The connection drops: the answer in flight is forgotten, the card can be answered again.
    state = reduce(state, { type: 'connection', status: 'reconnecting' });
    expect(cardsOf(state)[0]?.answering).toBeUndefined();
    // Reopened with its cursor: the pending request is already shown.
    state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_elicitations: [request] }));
    expect(cardsOf(state)).toHaveLength(1);
    // Reopened without one (a fresh page): the history, then the pending request after it.
    state = receive(state, sessionOpened('s1', { state: 'awaiting_approval', last_seq: s1.seq, pending_elicitations: [request] }));
    state = receive(state, history('s1', s1.seq, [{ role: 'user', content: 'go' }]));
    expect(shown(view(state, 's1').items)).toEqual(['user(sent): go', 'input input-1 from sdk']);
  });
});

function panel(state: ConsoleState, id = 's1'): string {
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

/** The card's markup: from its start to the composer's form after the conversation. */
function cardOf(markup: string): string {
  const start = markup.indexOf('data-testid="elicitation-card"');
  return markup.slice(start, markup.indexOf('<form class="composer"', start));
}

describe('the card of a request for input (page)', () => {
  it('shows the message and a labelled control per field, with Accept, Decline and Cancel', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, s1.elicitationRequest('input-1', { message: 'Fill <b>this</b> in', requested_schema: everyKind }));
    const markup = panel(state);
    expect(markup).toContain('data-testid="elicitation-card"');
    expect(markup).toContain('Fill &lt;b&gt;this&lt;/b&gt; in');
    for (const type of ['email', 'url', 'date', 'datetime-local', 'number', 'checkbox']) {
      expect(markup).toContain(`type="${type}"`);
    }
    // Every control has its label; the required ones are marked.
    const ids = [...markup.matchAll(/<(?:input|select)[^>]* id="([^"]+)"/g)].map((match) => match[1]);
    expect(ids.length).toBeGreaterThan(10);
    for (const id of ids) expect(markup).toContain(`for="${id}"`);
    expect(markup).toMatch(/<label for="[^"]+">Your name<span class="required" aria-hidden="true"> \*<\/span><\/label>/);
    expect(markup).toContain('aria-required="true"');
    expect(markup).toContain('<option value="s">Small</option>');
    expect(markup).toContain('As on your badge · at least 2 characters, at most 5 characters');
    expect(markup).toContain('value="3"');
    for (const label of ['Accept', 'Decline', 'Cancel']) expect(markup).toContain(`>${label}</button>`);
    expect(cardOf(markup)).not.toContain('disabled=""');
  });

  it('has its buttons off for an observer, and gives way to how it ended once resolved', () => {
    const s1 = new SessionScript('s1');
    let state = prompted(withFreshSession('s1'), s1, 'go');
    state = receive(state, s1.elicitationRequest('input-1'));
    const observer = panel({ ...state, sessions: { s1: { ...view(state, 's1'), role: 'observer' } } });
    expect(observer).toContain('Only a connected controller of this session can answer.');
    expect(observer).toMatch(/<button type="submit" class="primary" disabled="">Accept<\/button>/);
    state = receive(state, s1.event('elicitation_resolved', { request_id: 'input-1', action: 'accept', by: 'ws-2' }));
    const markup = panel(state);
    expect(markup).not.toContain('elicitation-form');
    expect(markup).toContain('Request for input from MCP server &quot;sdk&quot;: <strong>answered by ws-2</strong>');
  });
});

describe('the answer the page sends', () => {
  it('is an elicitation_response the protocol takes, and the card waits for the server', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      const factory = socketFactory();
      const page = new ConsoleController({
        storage: new MemoryStorage(),
        location: { protocol: 'http:', host: '127.0.0.1:8081' },
        createSocket: factory.create,
      });
      page.start('token');
      const socket = factory.last();
      socket.open();
      socket.receive(welcome());
      const s1 = new SessionScript('s1');
      for (const event of [sessionOpened('s1'), history('s1', 0), ...s1.start('go'), s1.elicitationRequest('input-1')]) {
        socket.receive(event);
      }
      page.answerElicitation('s1', 'input-1', { action: 'accept', content: { name: 'Ada', tags: ['x'] } });
      const answers = socket.sent.map((line) => parseClientMessage(line))
        .filter((parsed) => parsed.ok && parsed.message.type === 'elicitation_response');
      expect(answers).toEqual([{
        ok: true,
        message: {
          type: 'elicitation_response',
          session_id: 's1',
          request_id: 'input-1',
          action: 'accept',
          content: { name: 'Ada', tags: ['x'] },
        },
      }]);
      expect(cardsOf(page.getState())[0]).toMatchObject({ answering: 'accept' });
    } finally {
      vi.useRealTimers();
    }
  });
});
