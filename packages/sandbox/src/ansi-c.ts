// Bash's ANSI-C quoting, `$'...'` (bash manual, QUOTING, ANSI-C Quoting). Inside it backslash
// escapes are interpreted, so `\'` is a quote that does not end the string and `\\` is a
// backslash; a fence that reads it like `'...'` sees one harmless word where bash has already
// closed the string and runs what follows.

const letterEscapes = new Map<string, number>([
  ['a', 0x07], ['b', 0x08], ['e', 0x1b], ['E', 0x1b], ['f', 0x0c], ['n', 0x0a], ['r', 0x0d],
  ['t', 0x09], ['v', 0x0b], ['\\', 0x5c], ["'", 0x27], ['"', 0x22], ['?', 0x3f],
]);

const encoder = new TextEncoder();
// Bash builds bytes; read back as UTF-8, a byte-order mark kept, bad sequences as U+FFFD.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The index of the `'` that closes the ANSI-C string whose body starts at `start` (just after
 * `$'`), or `text.length` when nothing closes it. A backslash escapes the character after it, so
 * `\'` does not end the string and `\\'` does.
 */
export function ansiCEnd(text: string, start: number): number {
  let index = start;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char === "'") return index;
    index += char === '\\' ? 2 : 1;
  }
  return text.length;
}

/**
 * The value of the ANSI-C string with the body `body` (the text between `$'` and its closing
 * `'`), decoded as bash does: `\a \b \e \E \f \n \r \t \v \\ \' \" \?`, `\nnn` (one to three
 * octal digits, kept to one byte), `\xHH` (one or two hex digits), `\uHHHH` and `\UHHHHHHHH` (one
 * to four or eight hex digits, a Unicode character), `\cx` (the control character of `x`). Any
 * other backslash, and an escape with no digits (`\x`, `\u`), stays as written. Bash's strings
 * end at a NUL byte, so a `\0` (or `\x00`, `\u0000`, `\c@`) ends the value. Bytes are read as
 * UTF-8; those that are not (`\xff` alone) come out as U+FFFD. Linear in the length.
 */
export function decodeAnsiC(body: string): string {
  if (!body.includes('\\')) return body;
  const bytes: number[] = [];
  const pushText = (text: string): void => {
    for (const byte of encoder.encode(text)) bytes.push(byte);
  };
  let index = 0;
  let literalStart = 0;
  while (index < body.length) {
    if (body.charAt(index) !== '\\') {
      index += 1;
      continue;
    }
    pushText(body.slice(literalStart, index));
    const escape = readEscape(body, index + 1);
    index = escape.end;
    literalStart = index;
    const nul = escape.bytes.indexOf(0);
    if (nul !== -1) {
      bytes.push(...escape.bytes.slice(0, nul));
      return decoder.decode(Uint8Array.from(bytes));
    }
    bytes.push(...escape.bytes);
  }
  pushText(body.slice(literalStart));
  return decoder.decode(Uint8Array.from(bytes));
}

/** The bytes of the escape whose letter is at `start` (just after the backslash), and its end. */
function readEscape(body: string, start: number): { bytes: number[]; end: number } {
  const text = (value: string, end: number) => ({ bytes: [...encoder.encode(value)], end });
  if (start >= body.length) return text('\\', start);
  const letter = body.charAt(start);
  const simple = letterEscapes.get(letter);
  if (simple !== undefined) return { bytes: [simple], end: start + 1 };
  if (letter >= '0' && letter <= '7') {
    const { value, end } = digits(body, start, 3, 8);
    return { bytes: [value & 0xff], end };
  }
  if (letter === 'x' || letter === 'u' || letter === 'U') {
    const most = letter === 'x' ? 2 : letter === 'u' ? 4 : 8;
    const { value, end } = digits(body, start + 1, most, 16);
    if (end === start + 1) return text(`\\${letter}`, end);
    if (letter === 'x' || value <= 0x7f) return { bytes: [value], end };
    return text(unicode(value), end);
  }
  if (letter === 'c' && start + 1 < body.length) {
    const of = String.fromCodePoint(body.codePointAt(start + 1) ?? 0);
    let end = start + 1 + of.length;
    // `\c\\` is the control character of a backslash, both backslashes used up.
    if (of === '\\' && body.charAt(end) === '\\') end += 1;
    if (of === '?') return { bytes: [0x7f], end };
    // Bash takes the first byte (upper-cased when a letter) and keeps its low five bits.
    const [first = 0, ...rest] = encoder.encode(/^[a-z]$/.test(of) ? of.toUpperCase() : of);
    return { bytes: [first & 0x1f, ...rest], end };
  }
  const whole = String.fromCodePoint(body.codePointAt(start) ?? 0);
  return text(`\\${whole}`, start + whole.length);
}

function digits(
  body: string,
  start: number,
  most: number,
  radix: 8 | 16,
): { value: number; end: number } {
  let value = 0;
  let end = start;
  while (end < body.length && end - start < most) {
    const digit = Number.parseInt(body.charAt(end), radix);
    if (Number.isNaN(digit)) break;
    value = value * radix + digit;
    end += 1;
  }
  return { value, end };
}

function unicode(value: number): string {
  const valid = value <= 0x10ffff && (value < 0xd800 || value > 0xdfff);
  return valid ? String.fromCodePoint(value) : '\ufffd';
}
