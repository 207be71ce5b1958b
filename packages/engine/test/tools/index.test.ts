import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/index.js';

describe('builtinTools', () => {
  it('returns the four built-in tools in order with their risks', () => {
    const tools = builtinTools();
    expect(tools.map((tool) => [tool.definition.name, tool.risk])).toEqual([
      ['read_file', 'safe'],
      ['write_file', 'mutating'],
      ['edit_file', 'mutating'],
      ['bash', 'dangerous'],
    ]);
    for (const tool of tools) expect(typeof tool.parseArguments).toBe('function');
  });

  it('passes the options on to read_file and bash', () => {
    const [readFile, , , bash] = builtinTools({
      readFile: { defaultLimit: 50 },
      bash: { timeoutMs: 90_000 },
    });
    expect(readFile?.definition.description).toContain('(default 50)');
    expect(bash?.definition.description).toContain('killed after 90s');
  });

  it('validates arguments against the schema before execution', () => {
    const [readFile, , editFile, bash] = builtinTools();
    expect(readFile?.parseArguments?.({ path: 'a.txt', offset: 0 }).success).toBe(false);
    expect(readFile?.parseArguments?.({ path: 'a.txt', offset: 2, limit: 10 })).toEqual({
      success: true,
      data: { path: 'a.txt', offset: 2, limit: 10 },
    });
    expect(editFile?.parseArguments?.({ path: 'a', old_string: 'x' }).success).toBe(false);
    expect(bash?.parseArguments?.({ cmd: 'ls' }).success).toBe(false);
  });
});
