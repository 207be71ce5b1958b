// A small, quote-aware reader of shell text, enough for the command fences (SBX-2, SBX-3). It is
// not a shell parser: it knows words, quotes (bash's `$'...'` and `$"..."` too), escapes, `$VAR`,
// `$(...)`, backticks, redirections, here-documents and the operators that separate simple
// commands, and nothing else.

import { ansiCEnd, decodeAnsiC } from './ansi-c.js';

/** Stands in a word's value where a command substitution was. Real words never hold a NUL. */
export const substitutionMark = '\u0000';

/** One word of a simple command. */
export interface Word {
  /** The word after quote removal; `$NAME` and `${...}` are kept as written. */
  readonly value: string;
  /** The variables the word expands (outside single quotes). */
  readonly variables: readonly string[];
  /** The word starts with an unquoted `~`, which the shell expands to a home folder. */
  readonly tilde: boolean;
  /** Some part of the word was quoted or escaped. */
  readonly quoted: boolean;
}

/** A redirection such as `2>/dev/null`; `target` is missing when the text ended too early. */
export interface Redirect {
  readonly operator: string;
  readonly target: Word | undefined;
}

/** The words and redirections between two command separators. */
export interface SimpleCommand {
  readonly words: readonly Word[];
  readonly redirects: readonly Redirect[];
}

/** What `parseScript` found: the simple commands and the text of every substitution. */
export interface ParsedScript {
  readonly commands: readonly SimpleCommand[];
  /** The inner text of each `$(...)`, backtick and `<(...)` / `>(...)`, to be read in turn. */
  readonly substitutions: readonly string[];
  /**
   * An ANSI-C string (`$'...`) ran to the end of the text without its closing quote. Bash
   * refuses such text; read literally (`ansiC: false`) it may split differently.
   */
  readonly unterminatedAnsiC: boolean;
}

/** Options of {@link parseScript}. */
export interface ParseOptions {
  /**
   * Read `$'...'` as bash's ANSI-C quoting (escapes interpreted, `\'` does not end it) and
   * `$"..."` as bash's translated string (the `$` dropped). Default true. False reads both
   * literally: `$'...'` up to the next `'`, escapes and all, and `$"` as a `$` before a
   * double-quoted string, as a shell without them splits the text (`sh` may be dash).
   */
  readonly ansiC?: boolean;
}

const redirectOperators = ['<<<', '<<-', '>>', '>|', '>&', '<<', '<&', '<>', '>', '<'];
const separators = ';&|()';

/** Splits shell text into simple commands (on `;`, `&&`, `||`, `|`, `&`, parentheses, newlines). */
export function parseScript(script: string, options: ParseOptions = {}): ParsedScript {
  return new ScriptParser(script, options.ansiC ?? true).parse();
}

/**
 * The index of the `)` closing the group whose content starts at `start` (or the text length).
 * With `ansiC`, a `\'` inside `$'...'` does not end that string.
 */
export function closingParen(text: string, start: number, ansiC = true): number {
  let depth = 1;
  let index = start;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char === '\\') {
      index += 2;
      continue;
    }
    if (ansiC && char === '$' && text.charAt(index + 1) === "'") {
      index = ansiCEnd(text, index + 2) + 1;
      continue;
    }
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      index = end < 0 ? text.length : end + 1;
      continue;
    }
    if (char === '"') {
      index = skipDoubleQuoted(text, index + 1);
      continue;
    }
    if (char === '(') depth += 1;
    if (char === ')') {
      depth -= 1;
      if (depth === 0) return index;
    }
    index += 1;
  }
  return text.length;
}

function skipDoubleQuoted(text: string, start: number): number {
  let index = start;
  while (index < text.length && text.charAt(index) !== '"') {
    index += text.charAt(index) === '\\' ? 2 : 1;
  }
  return index + 1;
}

/**
 * `script` with every quoted string (`'...'`, `"..."` and, with `ansiC` as in
 * {@link ParseOptions}, `$'...'`) replaced by `""`, for checks on the raw text: quoted text is
 * only mentioned, never run. A backslash outside quotes escapes the character after it (both are
 * kept). An unterminated quote leaves the rest of the text as it is. Linear in the length.
 */
export function blankQuotedText(script: string, options: ParseOptions = {}): string {
  const ansiC = options.ansiC ?? true;
  const parts: string[] = [];
  let kept = 0;
  let index = 0;
  while (index < script.length) {
    const char = script.charAt(index);
    let after: number;
    if (char === '\\') {
      index += 2;
      continue;
    } else if (char === "'") {
      after = script.indexOf("'", index + 1) + 1;
    } else if (char === '"') {
      after = skipDoubleQuoted(script, index + 1);
    } else if (ansiC && char === '$' && script.charAt(index + 1) === "'") {
      after = ansiCEnd(script, index + 2) + 1;
    } else {
      index += 1;
      continue;
    }
    if (after <= index || after > script.length) break;
    parts.push(script.slice(kept, index), '""');
    index = after;
    kept = after;
  }
  parts.push(script.slice(kept));
  return parts.join('');
}

class ScriptParser {
  private readonly commands: SimpleCommand[] = [];
  private readonly substitutions: string[] = [];
  private words: Word[] = [];
  private redirects: Redirect[] = [];
  private value = '';
  private variables: string[] = [];
  private tilde = false;
  private quoted = false;
  private started = false;
  private pendingOperator: string | undefined;
  private heredocs: { delimiter: string; stripTabs: boolean }[] = [];
  private index = 0;
  private unterminatedAnsiC = false;

  constructor(
    private readonly text: string,
    private readonly ansiC: boolean,
  ) {}

  parse(): ParsedScript {
    const text = this.text;
    while (this.index < text.length) {
      const char = text.charAt(this.index);
      const next = text.charAt(this.index + 1);
      if (char === ' ' || char === '\t' || char === '\r') {
        this.endWord();
        this.index += 1;
      } else if (char === '\n') {
        this.endCommand();
        this.index += 1;
        this.skipHeredocBodies();
      } else if (char === '\\') {
        // A backslash before a newline joins the lines; before anything else it quotes it.
        if (next !== '\n') this.append(next === '' ? '\\' : next, true);
        this.index += 2;
      } else if (char === "'") {
        const end = text.indexOf("'", this.index + 1);
        const stop = end < 0 ? text.length : end;
        this.append(text.slice(this.index + 1, stop), true);
        this.index = stop + 1;
      } else if (char === '"') {
        this.readDoubleQuoted();
      } else if (char === '`') {
        this.readBackticks();
      } else if (char === '$') {
        this.readDollar(false);
      } else if (char === '#' && !this.started) {
        const end = text.indexOf('\n', this.index);
        this.index = end < 0 ? text.length : end;
      } else if ((char === '<' || char === '>') && next === '(') {
        this.readGroupSubstitution(this.index + 2);
      } else if (char === '<' || char === '>') {
        this.readRedirect();
      } else if (char === '&' && next === '>') {
        this.endWord();
        const operator = text.startsWith('&>>', this.index) ? '&>>' : '&>';
        this.startRedirect(operator);
        this.index += operator.length;
      } else if (separators.includes(char)) {
        this.endCommand();
        this.index += 1;
      } else {
        if (!this.started && char === '~') this.tilde = true;
        this.append(char, false);
        this.index += 1;
      }
    }
    this.endCommand();
    return {
      commands: this.commands,
      substitutions: this.substitutions,
      unterminatedAnsiC: this.unterminatedAnsiC,
    };
  }

  private append(text: string, quoted: boolean): void {
    this.value += text;
    this.started = true;
    if (quoted) this.quoted = true;
  }

  private readDoubleQuoted(): void {
    const text = this.text;
    this.index += 1;
    this.append('', true);
    while (this.index < text.length && text.charAt(this.index) !== '"') {
      const char = text.charAt(this.index);
      const next = text.charAt(this.index + 1);
      if (char === '\\' && '$`"\\\n'.includes(next) && next !== '') {
        if (next !== '\n') this.append(next, true);
        this.index += 2;
      } else if (char === '$') {
        this.readDollar(true);
      } else if (char === '`') {
        this.readBackticks();
      } else {
        this.append(char, true);
        this.index += 1;
      }
    }
    this.index += 1;
  }

  private readBackticks(): void {
    const text = this.text;
    let end = this.index + 1;
    while (end < text.length && text.charAt(end) !== '`') end += text.charAt(end) === '\\' ? 2 : 1;
    const inner = text.slice(this.index + 1, Math.min(end, text.length));
    this.substitutions.push(inner.replace(/\\([`\\$])/g, '$1'));
    this.append(substitutionMark, false);
    this.index = end + 1;
  }

  private readGroupSubstitution(start: number): void {
    const end = closingParen(this.text, start, this.ansiC);
    this.substitutions.push(this.text.slice(start, end));
    this.append(substitutionMark, false);
    this.index = end + 1;
  }

  private readDollar(inDoubleQuotes: boolean): void {
    const text = this.text;
    const next = text.charAt(this.index + 1);
    if (next === '(') {
      this.readGroupSubstitution(this.index + 2);
      return;
    }
    // Inside double quotes `$'` and `$"` are plain text (a `$`, then the quote as usual).
    if (next === "'" && this.ansiC && !inDoubleQuotes) {
      // ANSI-C quoting: escapes are interpreted, `\'` does not end the string. Unterminated, it
      // runs to the end, as an unterminated '...' does.
      const stop = ansiCEnd(text, this.index + 2);
      if (stop >= text.length) this.unterminatedAnsiC = true;
      this.append(decodeAnsiC(text.slice(this.index + 2, stop)), true);
      this.index = stop + 1;
      return;
    }
    if (next === "'" && !inDoubleQuotes) {
      // Read literally: up to the next quote, escapes and all.
      const end = text.indexOf("'", this.index + 2);
      const stop = end < 0 ? text.length : end;
      this.append(text.slice(this.index + 2, stop), true);
      this.index = stop + 1;
      return;
    }
    if (next === '"' && this.ansiC && !inDoubleQuotes) {
      // Bash's translated string, $"...": the text of a double-quoted string, without the `$`.
      this.index += 1;
      return;
    }
    if (next === '{') {
      const end = text.indexOf('}', this.index + 2);
      const stop = end < 0 ? text.length : end;
      const body = text.slice(this.index + 2, stop);
      const name = /^[#!]?([A-Za-z_]\w*)/.exec(body)?.[1];
      if (name !== undefined) this.variables.push(name);
      this.append(`\${${body}}`, false);
      this.index = stop + 1;
      return;
    }
    const name = /^[A-Za-z_]\w*/.exec(text.slice(this.index + 1))?.[0];
    if (name !== undefined) {
      this.variables.push(name);
      this.append(`$${name}`, false);
      this.index += 1 + name.length;
      return;
    }
    this.append('$', false);
    this.index += 1;
  }

  private readRedirect(): void {
    // Digits written right before the operator name a file descriptor (`2>`), not a word.
    if (this.started && !this.quoted && /^\d+$/.test(this.value)) this.resetWord();
    else this.endWord();
    const operator =
      redirectOperators.find((candidate) => this.text.startsWith(candidate, this.index)) ?? '>';
    this.startRedirect(operator);
    this.index += operator.length;
  }

  private startRedirect(operator: string): void {
    if (this.pendingOperator !== undefined) {
      this.redirects.push({ operator: this.pendingOperator, target: undefined });
    }
    this.pendingOperator = operator;
  }

  private skipHeredocBodies(): void {
    const text = this.text;
    for (const { delimiter, stripTabs } of this.heredocs) {
      while (this.index < text.length) {
        const end = text.indexOf('\n', this.index);
        const stop = end < 0 ? text.length : end;
        const line = text.slice(this.index, stop);
        this.index = stop + 1;
        if ((stripTabs ? line.replace(/^\t+/, '') : line) === delimiter) break;
      }
    }
    this.heredocs = [];
  }

  private resetWord(): void {
    this.value = '';
    this.variables = [];
    this.tilde = false;
    this.quoted = false;
    this.started = false;
  }

  private endWord(): void {
    if (!this.started) return;
    const word: Word = {
      value: this.value,
      variables: this.variables,
      tilde: this.tilde,
      quoted: this.quoted,
    };
    this.resetWord();
    const operator = this.pendingOperator;
    if (operator === undefined) {
      this.words.push(word);
      return;
    }
    this.redirects.push({ operator, target: word });
    if (operator === '<<' || operator === '<<-') {
      this.heredocs.push({ delimiter: word.value, stripTabs: operator === '<<-' });
    }
    this.pendingOperator = undefined;
  }

  private endCommand(): void {
    this.endWord();
    if (this.pendingOperator !== undefined) {
      this.redirects.push({ operator: this.pendingOperator, target: undefined });
      this.pendingOperator = undefined;
    }
    if (this.words.length > 0 || this.redirects.length > 0) {
      this.commands.push({ words: this.words, redirects: this.redirects });
    }
    this.words = [];
    this.redirects = [];
  }
}
