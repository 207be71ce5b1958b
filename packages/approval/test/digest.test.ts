import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { argumentDigest, canonicalJson, grantKey } from '../src/index.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

describe('canonicalJson', () => {
  it('sorts object keys recursively, keeps array order and drops whitespace', () => {
    const value: unknown = JSON.parse('{ "b": [3, {"z": 1, "a": 2}], "a": {"d": null, "c": "x"} }');
    expect(canonicalJson(value)).toBe('{"a":{"c":"x","d":null},"b":[3,{"a":2,"z":1}]}');
  });

  it('keeps a __proto__ key as data', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":1}'))).toBe('{"__proto__":{"x":1},"a":1}');
  });
});

describe('argumentDigest (APR-2)', () => {
  it('is the sha256 hex of the canonical JSON', () => {
    expect(argumentDigest('{"b":2,"a":1}')).toBe(sha256('{"a":1,"b":2}'));
    expect(argumentDigest('{"b":2,"a":1}')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on key order, at any depth, nor on whitespace', () => {
    expect(argumentDigest('{"a":1,"b":2}')).toBe(argumentDigest('{"b":2,"a":1}'));
    expect(argumentDigest('{"outer":{"x":[1,{"p":1,"q":2}],"y":true}}')).toBe(
      argumentDigest('{ "outer" : { "y" : true, "x" : [ 1, { "q" : 2, "p" : 1 } ] } }'),
    );
  });

  it('tells different arguments and array orders apart', () => {
    expect(argumentDigest('{"command":"npm test"}')).not.toBe(argumentDigest('{"command":"npm run build"}'));
    expect(argumentDigest('{"a":[1,2]}')).not.toBe(argumentDigest('{"a":[2,1]}'));
    expect(argumentDigest('{"a":1}')).not.toBe(argumentDigest('{"a":"1"}'));
  });

  it('counts empty and blank arguments as {}', () => {
    const empty = sha256('{}');
    expect(argumentDigest('')).toBe(empty);
    expect(argumentDigest('  \n\t')).toBe(empty);
    expect(argumentDigest('{}')).toBe(empty);
  });

  it('hashes invalid JSON from its raw bytes behind a prefix, never equal to {} or to the plain hash', () => {
    const broken = '{"command": "ls"';
    const digest = argumentDigest(broken);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).not.toBe(argumentDigest('{}'));
    expect(digest).not.toBe(sha256(broken));
    expect(argumentDigest('{')).not.toBe(argumentDigest('{}'));
    // The raw text itself decides: other invalid text, another digest; the same text, the same one.
    expect(argumentDigest('{"command": "ls" ')).not.toBe(digest);
    expect(argumentDigest(broken)).toBe(digest);
  });

  it('gives raw text that spells a JSON value in a non-JSON way its own digest', () => {
    // Single quotes are not JSON: this must not collapse onto {"a":1}.
    expect(argumentDigest("{'a':1}")).not.toBe(argumentDigest('{"a":1}'));
  });
});

describe('grantKey', () => {
  const parts = { sessionId: 's', workDir: '/w', toolName: 'bash', digest: 'd' };

  it('changes with every part', () => {
    const key = grantKey(parts);
    expect(grantKey({ ...parts, sessionId: 's2' })).not.toBe(key);
    expect(grantKey({ ...parts, workDir: '/w2' })).not.toBe(key);
    expect(grantKey({ ...parts, toolName: 'write_file' })).not.toBe(key);
    expect(grantKey({ ...parts, digest: 'e' })).not.toBe(key);
    expect(grantKey({ ...parts })).toBe(key);
  });

  it('cannot be forged by moving text from one part into the next', () => {
    expect(grantKey({ ...parts, sessionId: 'a|b', workDir: 'c' })).not.toBe(
      grantKey({ ...parts, sessionId: 'a', workDir: 'b|c' }),
    );
  });
});
