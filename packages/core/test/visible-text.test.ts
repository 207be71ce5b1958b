import { describe, expect, it } from 'vitest';
import { visible } from '../src/index.js';

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
});
