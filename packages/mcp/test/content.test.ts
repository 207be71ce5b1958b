import { defaultMaxOutputBytes } from '@claw/core';
import { describe, expect, it } from 'vitest';
import { base64Bytes, capOutput, formatContent, formatResourceContents } from '../src/index.js';

describe('formatContent (MCP-2)', () => {
  it('joins text blocks with newlines', () => {
    expect(formatContent([{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }])).toBe('one\ntwo');
  });

  it('describes images, audio, resource links and embedded resources by type and size', () => {
    const png = Buffer.alloc(67, 1).toString('base64');
    const wav = Buffer.alloc(1000, 2).toString('base64');
    expect(formatContent([
      { type: 'text', text: 'Here it is:' },
      { type: 'image', data: png, mimeType: 'image/png' },
      { type: 'audio', data: wav, mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///r/a.txt', name: 'a.txt', mimeType: 'text/plain', size: 12 },
      { type: 'resource_link', uri: 'demo://x', name: 'x', description: 'a demo' },
      { type: 'resource', resource: { uri: 'demo://text', mimeType: 'text/plain', text: 'inner text' } },
      { type: 'resource', resource: { uri: 'demo://blob', mimeType: 'application/zip', blob: wav } },
      { type: 'hologram' },
    ])).toBe([
      'Here it is:',
      '[image: image/png, 67 bytes]',
      '[audio: audio/wav, 1000 bytes]',
      '[resource link: a.txt file:///r/a.txt (text/plain, 12 bytes)]',
      '[resource link: x demo://x — a demo]',
      '[resource demo://text (text/plain)]\ninner text',
      '[resource demo://blob (application/zip, 1000 bytes)]',
      '[hologram content, not shown]',
    ].join('\n'));
  });

  it('falls back to the structured content when there are no blocks', () => {
    expect(formatContent([], { temperature: 21 })).toBe('{\n  "temperature": 21\n}');
    expect(formatContent(undefined)).toBe('');
  });

  it('counts base64 bytes with and without padding', () => {
    for (const size of [0, 1, 2, 3, 4, 5, 100]) {
      expect(base64Bytes(Buffer.alloc(size).toString('base64'))).toBe(size);
    }
  });

  it('formats resources/read contents', () => {
    expect(formatResourceContents([
      { uri: 'a://1', text: 'hello' },
      { uri: 'a://2', mimeType: 'image/gif', blob: Buffer.alloc(5).toString('base64') },
    ])).toBe('[resource a://1 (unknown type)]\nhello\n[resource a://2 (image/gif, 5 bytes)]');
  });
});

describe('capOutput: output capped like bash', () => {
  it('keeps output up to the limit as it is', () => {
    const text = 'x'.repeat(defaultMaxOutputBytes);
    expect(capOutput(text, defaultMaxOutputBytes)).toBe(text);
  });

  it('cuts the middle of longer output and says how much was cut and what to do', () => {
    const text = `${'a'.repeat(100_000)}${'z'.repeat(100_000)}`;
    const capped = capOutput(text, defaultMaxOutputBytes);
    const half = defaultMaxOutputBytes / 2;
    expect(capped.startsWith('a'.repeat(half))).toBe(true);
    expect(capped.endsWith('z'.repeat(half))).toBe(true);
    expect(capped).toContain(`[... ${200_000 - defaultMaxOutputBytes} bytes of output cut; ask the tool for less`);
    expect(Buffer.byteLength(capped)).toBeLessThan(defaultMaxOutputBytes + 200);
  });
});
