import { describe, expect, it } from 'vitest';
import { visible, withoutColourCodes } from '../src/index.js';

describe('visible', () => {
  it('writes each character a terminal or a browser acts on as an escape', () => {
    expect(visible('a\u001b[31mb\u0007c\u009bd\u007fe\u0000f\rg')).toBe('a\\x1b[31mb\\x07c\\x9bd\\x7fe\\x00f\\x0dg');
    // Bidirectional embeddings, overrides and isolates reorder what is shown ("Trojan Source").
    expect(visible('rm -rf ~ \u202a\u202e\u2066x\u2069')).toBe('rm -rf ~ \\u202a\\u202e\\u2066x\\u2069');
  });

  it('leaves the rest as it is: tab, newline, any script, right-to-left text and its marks', () => {
    const text = 'tab\tnew\nline é 日本 ✓ שלום\u200f עולם 🙂';
    expect(visible(text)).toBe(text);
  });

  it('output can lose its colour codes, and only them', () => {
    expect(withoutColourCodes('\u001b[1;32mPASS\u001b[0m a.test.ts \u001b[38:5:208mwarn\u001b[m')).toBe('PASS a.test.ts warn');
    // Other sequences (erase a line, move the cursor) stay, for `visible` to show.
    expect(withoutColourCodes('a\u001b[2Kb\u001b[1Ac')).toBe('a\u001b[2Kb\u001b[1Ac');
  });
});
