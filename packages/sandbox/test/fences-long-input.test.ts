import { describe, expect, it } from 'vitest';
import { checkDestructiveCommand, checkProtectedPaths, checkWorkspaceEscape } from '../src/index.js';

// A model can send any text. The fences must stay linear in its length: a pattern that
// backtracks quadratically takes minutes on these inputs and fails by the test timeout.
describe('the command fences on very long input', () => {
  const long = 'a'.repeat(300_000);
  // [input, destructive?, escapes?] — each fence must answer, and answer right.
  const inputs: Array<[string, boolean, boolean]> = [
    [`echo ${long}`, false, false],
    [`${long}(){ ${long}|${long}& };${long}`, true, false],
    [`cat ${'../'.repeat(100_000)}x`, false, true],
    [`${'f(){'.repeat(100_000)}`, false, false],
    [`echo "${long}`, false, false],
    [`echo ${long} > .claw/grants.json`, false, false],
  ];

  it.each(inputs.map(([input, destructive, escapes], index) => [index, input, destructive, escapes] as const))(
    'input %i is judged in linear time',
    (_index, input, destructive, escapes) => {
      expect(checkDestructiveCommand(input) !== undefined).toBe(destructive);
      expect(checkWorkspaceEscape(input) !== undefined).toBe(escapes);
      expect(checkProtectedPaths(input) !== undefined).toBe(input.includes('.claw/'));
    },
  );

  it('still judges a long command correctly', () => {
    expect(checkDestructiveCommand(`echo ${long}; rm -rf /`)).toBeDefined();
    expect(checkWorkspaceEscape(`cat ${'a/'.repeat(100_000)}../../x`)).toBeUndefined();
    expect(checkWorkspaceEscape(`cat ${'../'.repeat(3)}x`)).toBeDefined();
  });
});
