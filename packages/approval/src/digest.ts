import { createHash, hash } from 'node:crypto';

/**
 * Put in front of raw text that is not JSON before hashing it. No canonical JSON text starts with
 * a NUL byte, so the hash input of raw text can never equal the hash input of a JSON value.
 */
const rawTextPrefix = '\u0000claw-raw-arguments\u0000';

/**
 * The canonical JSON of a parsed JSON value: object keys sorted (recursively, by UTF-16 code
 * units), arrays kept in order, no whitespace. Numbers and strings are written as
 * `JSON.stringify` writes them, so `1.0` and `1` are the same value.
 *
 * Built as text rather than as a sorted copy, so a key such as `__proto__` is kept as data.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => canonicalJson(item)).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members = Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`);
  return `{${members.join(',')}}`;
}

/**
 * The digest of a tool call's raw JSON arguments that grants are keyed by (APR-2): the sha256 (hex)
 * of their canonical JSON, so `{"a":1,"b":2}` and `{"b":2,"a":1}` have the same digest.
 * Empty or blank arguments count as `{}`. Text that is not valid JSON (or too deeply nested to
 * canonicalise) is hashed from its raw UTF-8 bytes behind a prefix that no JSON text has, so its
 * digest never equals that of `{}` or of any JSON value.
 */
export function argumentDigest(rawArguments: string): string {
  const raw = rawArguments.trim() === '' ? '{}' : rawArguments;
  let input: string;
  try {
    input = canonicalJson(JSON.parse(raw));
  } catch {
    // Invalid JSON (SyntaxError) or nesting deeper than the stack (RangeError).
    input = rawTextPrefix + raw;
  }
  return sha256Hex(input);
}

// One-shot `crypto.hash` (Node 20.12 and later) is a few times cheaper than a Hash object (a
// digest per tool call, PERF-1); the same digest either way.
const sha256Hex: (text: string) => string =
  typeof hash === 'function'
    ? (text) => hash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text, 'utf8').digest('hex');
