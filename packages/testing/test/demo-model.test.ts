import type { Message, ModelRequest } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { createDemoModel } from '../src/demo.js';

const call = (id: string, name: string, args: Record<string, unknown>): Message => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});
const result = (id: string, content: string, isError = false): Message => ({
  role: 'tool',
  toolCallId: id,
  content,
  ...(isError ? { isError: true } : {}),
});

async function reply(messages: Message[], unattended: boolean) {
  const model = createDemoModel({ unattended, chunkDelayMs: 0 });
  const request: ModelRequest = { messages: [{ role: 'user', content: 'demo' }, ...messages] };
  return (await model.generate(request)).message;
}

const bashDenied =
  'Error: permission denied: the user denied it: bash will run: node greet.js claw\nbash is NOT isolated on this machine: …\n' +
  'Hint: do not repeat this call';

describe('the demo model', () => {
  it('decides each step from the last result: read, write, edit (or skip it), run', async () => {
    expect((await reply([], true)).toolCalls?.[0]).toMatchObject({ name: 'read_file' });
    const read = [call('1', 'read_file', { path: 'README.md' }), result('1', '# greet\n\nA tiny tool.\n\nUsage: node greet.js <name>')];
    const write = (await reply(read, true)).toolCalls?.[0];
    expect(write?.name).toBe('write_file');
    expect(JSON.parse(write?.arguments ?? '{}')).toMatchObject({
      path: 'NOTES.md',
      content: expect.stringContaining('- How to run it: node greet.js <name>') as unknown,
    });
    const written = [...read, call('2', 'write_file', { path: 'NOTES.md' }), result('2', 'wrote')];
    expect((await reply(written, true)).toolCalls?.[0]).toMatchObject({ name: 'edit_file' });
    const writeDenied = [...read, call('2', 'write_file', { path: 'NOTES.md' }), result('2', 'Error: permission denied: x', true)];
    expect((await reply(writeDenied, true)).toolCalls?.[0]).toMatchObject({ name: 'bash' });
  });

  it('the summary says why bash was denied: unattended without isolation, or the user said no', async () => {
    const history = [call('4', 'bash', { command: 'node greet.js claw' }), result('4', bashDenied, true)];
    const unattended = await reply(history, true);
    expect(unattended.toolCalls).toBeUndefined();
    expect(unattended.content).toContain('- run `node greet.js claw`: denied — bash is NOT isolated on this machine');
    expect(unattended.content).toContain('1 step denied by the approval gate');
    expect((await reply(history, false)).content).toContain('denied — you answered no');
  });

  it('an endless demo model serves one task after another, each from its own first step', async () => {
    const model = createDemoModel({ unattended: true, chunkDelayMs: 0, endless: true });
    const task = (content: string): Message => ({ role: 'user', content });
    const read = [call('1', 'read_file', { path: 'README.md' }), result('1', '# greet')];
    for (let round = 0; round < 8; round += 1) {
      const messages: Message[] = [task('one'), ...read, { role: 'assistant', content: 'done' }, task(`task ${round}`)];
      const next = (await model.generate({ messages })).message;
      expect(next.toolCalls?.[0]).toMatchObject({ name: 'read_file' });
    }
    expect(model.calls).toEqual([]);
  });
});
