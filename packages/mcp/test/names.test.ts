import { describe, expect, it } from 'vitest';
import { assignToolNames, maxToolNameLength, sanitizeNamePart } from '../src/index.js';

const valid = /^[A-Za-z0-9_-]{1,64}$/;

describe('assignToolNames (MCP-2)', () => {
  it('names a tool mcp_<server>_<tool> when that is already valid', () => {
    expect(assignToolNames([
      { server: 'everything', tool: 'echo' },
      { server: 'everything', tool: 'get-sum' },
      { server: 'fs', tool: 'read_file' },
    ])).toEqual(['mcp_everything_echo', 'mcp_everything_get-sum', 'mcp_fs_read_file']);
  });

  it('maps dots, spaces, slashes and unicode to "_" (one per character, emoji included)', () => {
    expect(sanitizeNamePart('files.read v2/all')).toBe('files_read_v2_all');
    expect(sanitizeNamePart('ツール')).toBe('___');
    expect(sanitizeNamePart('naïve😀x')).toBe('na_ve_x');
    expect(assignToolNames([
      { server: 'my.server', tool: 'files.read' },
      { server: 'docs', tool: 'поиск' },
    ])).toEqual(['mcp_my_server_files_read', 'mcp_docs______']);
  });

  it('shortens a 200-character name with a hash: valid, at most 64 characters, and stable', () => {
    const tool = 'a'.repeat(200);
    const [name] = assignToolNames([{ server: 'long', tool }]);
    expect(name).toMatch(valid);
    expect(name).toHaveLength(maxToolNameLength);
    expect(name).toMatch(/^mcp_long_a+_[0-9a-f]{8}$/);
    expect(assignToolNames([{ server: 'long', tool }])).toEqual([name]);
    // Two long names that differ only at their end still get different names.
    const [other] = assignToolNames([{ server: 'long', tool: `${'a'.repeat(199)}b` }]);
    expect(other).not.toBe(name);
    expect(other).toHaveLength(maxToolNameLength);
  });

  it('two tools that map to the same name get different names: the exact one keeps it, the other gets a hash', () => {
    const names = assignToolNames([
      { server: 's', tool: 'a.b' },
      { server: 's', tool: 'a_b' },
    ]);
    expect(names[1]).toBe('mcp_s_a_b');
    expect(names[0]).toMatch(/^mcp_s_a_b_[0-9a-f]{8}$/);
    expect(new Set(names).size).toBe(2);
  });

  it('when none of the colliding tools is exact, the first keeps the name and the others get hashes', () => {
    const names = assignToolNames([
      { server: 's', tool: 'a.b' },
      { server: 's', tool: 'a b' },
      { server: 's', tool: 'a/b' },
    ]);
    expect(names[0]).toBe('mcp_s_a_b');
    expect(names.slice(1).every((name) => /^mcp_s_a_b_[0-9a-f]{8}$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(3);
  });

  it('tools of two servers that meet in one name (mcp_a_b + c, mcp_a + b_c) are told apart', () => {
    const names = assignToolNames([
      { server: 'a_b', tool: 'c' },
      { server: 'a', tool: 'b_c' },
    ]);
    expect(names[0]).toBe('mcp_a_b_c');
    expect(names[1]).toMatch(/^mcp_a_b_c_[0-9a-f]{8}$/);
  });

  it('never hands out a name twice, even when a hashed name equals another tool\'s plain name', () => {
    const [, hashed] = assignToolNames([{ server: 's', tool: 'x' }, { server: 's', tool: 'x.' }]);
    const names = assignToolNames([
      { server: 's', tool: 'x' },
      { server: 's', tool: 'x.' },
      { server: 's', tool: hashed?.slice('mcp_s_'.length) ?? '' },
    ]);
    expect(new Set(names).size).toBe(3);
    expect(names.every((name) => valid.test(name))).toBe(true);
  });
});
