import { describe, expect, it } from 'vitest';
import { describeToolCall, summarizeToolResult } from '../src/format.js';

describe('compact tool lines (CLI-4)', () => {
  it('a call shows its tool and main argument', () => {
    expect(describeToolCall({ name: 'write_file', arguments: '{"path":"notes.txt","content":"x"}' })).toBe('write_file notes.txt');
    expect(describeToolCall({ name: 'bash', arguments: '{"command":"npm test\\n  && ls"}' })).toBe('bash npm test ⏎ && ls');
    expect(describeToolCall({ name: 'mcp_x_y', arguments: '{"q":1}' })).toBe('mcp_x_y {"q":1}');
    expect(describeToolCall({ name: 'bash', arguments: `{"command":"${'a'.repeat(300)}"}` })).toHaveLength(100);
  });

  it('a result shows its first line, without the hint meant for the model', () => {
    expect(summarizeToolResult({ toolName: 'write_file', content: 'wrote 12 bytes to notes.txt (created)' }))
      .toBe('wrote 12 bytes to notes.txt (created)');
    expect(summarizeToolResult({
      toolName: 'write_file',
      content: 'Error: permission denied: the user denied it: write_file will write a\nHint: do not repeat this call',
    })).toBe('permission denied: the user denied it: write_file will write a');
    expect(summarizeToolResult({ toolName: 'bash', content: 'exit code: 0\n--- stdout ---\nHello, claw!\nmore\n--- stderr (empty) ---' }))
      .toBe('exit code 0 · Hello, claw!');
    expect(summarizeToolResult({ toolName: 'bash', content: 'exit code: 2\n--- stdout (empty) ---\n--- stderr ---\nboom' }))
      .toBe('exit code 2 · boom');
    expect(summarizeToolResult({ toolName: 'read_file', content: 'a\nb\nc' })).toBe('read 3 lines');
  });
});
