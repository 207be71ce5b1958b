import { describe, expect, it } from 'vitest';
import { checkDestructiveCommand, checkProtectedPaths, checkWorkspaceEscape } from '../src/index.js';

// A model can send any text. The fences must stay linear in its length: a pattern that
// backtracks quadratically takes minutes on these inputs and fails by the test timeout.
describe('the command fences on very long input', () => {
  const long = 'a'.repeat(300_000);
  const inputs = [
    `echo ${long}`,
    `${long}(){ ${long}|${long}& };${long}`,
    `cat ${'../'.repeat(100_000)}x`,
    `${'f(){'.repeat(100_000)}`,
    `echo "${long}`,
    `$(${'$('.repeat(10_000)}`,
  ];

  it.each(inputs.map((input, index) => [index, input] as const))('input %i returns', (_index, input) => {
    expect(typeof (checkDestructiveCommand(input) ?? '')).toBe('string');
    expect(typeof (checkWorkspaceEscape(input) ?? '')).toBe('string');
    expect(typeof (checkProtectedPaths(input) ?? '')).toBe('string');
  });

  it('still judges a long command correctly', () => {
    expect(checkDestructiveCommand(`echo ${long}; rm -rf /`)).toBeDefined();
    expect(checkWorkspaceEscape(`cat ${'a/'.repeat(100_000)}../../x`)).toBeUndefined();
    expect(checkWorkspaceEscape(`cat ${'../'.repeat(3)}x`)).toBeDefined();
  });
});
