import type { ElicitationPrompt } from '@claw/approval';
import type { ElicitationAnswer, ElicitationContent } from '@claw/core';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

/** What a line typed into a form did: more to ask (`text`), or the answer to give. */
export type FormStep = { text: string } | { text: string; answer: ElicitationAnswer };

type Field = [name: string, schema: Readonly<Record<string, unknown>>];

/** Checks the whole form once filled in (defaults applied). */
type Validate = (
  content: Record<string, unknown>,
) => Promise<{ valid: true } | { valid: false; error: string }>;

export const formChoices = '[f] fill in  [d] decline  [c] cancel';

/**
 * An MCP server's request for input as the terminal asks it (MCP-7), one line at a time: first
 * whether to fill it in, decline or cancel; then each field of the form in turn (its title, type,
 * choices, default, whether it is required; an empty line keeps the default or leaves it out,
 * `!decline` or `!cancel` end the form). The filled-in form is checked against the schema; when
 * it does not fit, the user is told why and the fields are asked again.
 */
export class TerminalForm {
  readonly prompt: ElicitationPrompt;
  private readonly fields: Field[];
  private readonly required: ReadonlySet<string>;
  /** -1: the first question (fill in, decline, cancel); else the field being asked. */
  private step = -1;
  private values: Record<string, unknown> = {};

  constructor(prompt: ElicitationPrompt) {
    this.prompt = prompt;
    this.fields = Object.entries(prompt.requestedSchema.properties ?? {});
    this.required = new Set(prompt.requestedSchema.required ?? []);
  }

  /** The question first shown (no newline: the answer follows). */
  opening(style: Style): string {
    const count = this.fields.length;
    return (
      `${style.yellow('?')} ` +
      `${style.bold(`MCP server ${JSON.stringify(this.prompt.server)} asks for input`)}\n` +
      `${visible(this.prompt.message).split('\n').map((line) => `  ${line}`).join('\n')}\n` +
      `  ${style.dim(`(a form of ${count} ${count === 1 ? 'field' : 'fields'})`)}\n` +
      `  ${formChoices} > `
    );
  }

  /** What is asked now, to say again after other output (no newline). */
  current(style: Style): string {
    if (this.step < 0) return `  ${style.yellow('still asking:')} ${formChoices} > `;
    return this.fieldQuestion(style);
  }

  /**
   * Takes one typed line. `validate` checks the whole form once filled in (the MCP package's
   * `validateElicitationContent`, defaults applied).
   */
  async take(
    line: string,
    style: Style,
    validate: Validate,
  ): Promise<FormStep> {
    const typed = line.trim();
    if (this.step < 0) {
      switch (typed.toLowerCase()) {
        case 'f':
        case 'fill':
        case 'y':
        case 'yes':
          return this.next(style, validate);
        case 'd':
        case 'decline':
        case 'n':
        case 'no':
          return { text: `  ${style.red('declined')}\n`, answer: { action: 'decline' } };
        case 'c':
        case 'cancel':
          return { text: `  ${style.yellow('canceled')}\n`, answer: { action: 'cancel' } };
        default:
          return { text: `  ${style.yellow('answer f, d or c')}: ${formChoices} > ` };
      }
    }
    if (typed === '!decline') {
      return { text: `  ${style.red('declined')}\n`, answer: { action: 'decline' } };
    }
    if (typed === '!cancel') {
      return { text: `  ${style.yellow('canceled')}\n`, answer: { action: 'cancel' } };
    }
    const field = this.fields[this.step];
    if (field === undefined) return this.next(style, validate);
    const [name, schema] = field;
    const parsed = parseField(typed, schema);
    if ('error' in parsed) {
      return { text: `  ${style.yellow(parsed.error)}\n${this.fieldQuestion(style)}` };
    }
    if (parsed.value === undefined) {
      if (this.required.has(name) && schema.default === undefined) {
        return { text: `  ${style.yellow('this field is required')}\n${this.fieldQuestion(style)}` };
      }
      delete this.values[name];
    } else {
      this.values[name] = parsed.value;
    }
    this.step += 1;
    return this.next(style, validate);
  }

  /** The next field's question, or (all asked) the checked answer. */
  private async next(
    style: Style,
    validate: Validate,
  ): Promise<FormStep> {
    if (this.step < 0) {
      this.step = 0;
      if (this.fields.length > 0) {
        const hint = style.dim('!decline or !cancel ends the form');
        return { text: `  ${hint}\n${this.fieldQuestion(style)}` };
      }
    }
    if (this.step < this.fields.length) return { text: this.fieldQuestion(style) };
    const content = { ...this.values };
    const checked = await validate(content);
    if (!checked.valid) {
      // Asked again from the first field: what was typed may be what the check refused.
      this.step = 0;
      this.values = {};
      return {
        text: `  ${style.yellow(`the answer does not fit the form: ${visible(checked.error)}`)}\n` +
          this.fieldQuestion(style),
      };
    }
    return {
      text: `  ${style.green('sent')}\n`,
      answer: { action: 'accept', content: content as ElicitationContent },
    };
  }

  private fieldQuestion(style: Style): string {
    const field = this.fields[this.step];
    if (field === undefined) return '';
    const [name, schema] = field;
    const title = typeof schema.title === 'string' ? visible(schema.title) : name;
    const facts = [describeType(schema)];
    const choices = enumChoices(schema);
    if (choices !== undefined) {
      facts.push(`one of ${choices.map((choice) => choice.label).join(', ')}`);
    }
    if (schema.default !== undefined) facts.push(`default ${JSON.stringify(schema.default)}`);
    if (this.required.has(name)) facts.push('required');
    const description = typeof schema.description === 'string'
      ? `  ${style.dim(visible(schema.description))}\n`
      : '';
    return `${description}  ${style.bold(title)} ${style.dim(`(${facts.join(', ')})`)} > `;
  }
}

interface Choice {
  value: string;
  label: string;
}

/** The choices of an enum field (`enum`, titled `oneOf`/`anyOf` of `const`, or arrays of them). */
function enumChoices(schema: Readonly<Record<string, unknown>>): Choice[] | undefined {
  const of = schema.type === 'array' && typeof schema.items === 'object' && schema.items !== null
    ? (schema.items as Record<string, unknown>)
    : schema;
  if (Array.isArray(of.enum)) {
    const names = Array.isArray(of.enumNames) ? of.enumNames : [];
    return of.enum.map((value, index) => ({
      value: String(value),
      label: typeof names[index] === 'string' && names[index] !== String(value)
        ? `${String(value)} (${visible(names[index])})`
        : String(value),
    }));
  }
  const options = Array.isArray(of.oneOf)
    ? of.oneOf
    : Array.isArray(of.anyOf) ? of.anyOf : undefined;
  if (options === undefined) return undefined;
  return options.flatMap((option: unknown) => {
    if (typeof option !== 'object' || option === null) return [];
    const { const: constant, title } = option as { const?: unknown; title?: unknown };
    if (typeof constant !== 'string' && typeof constant !== 'number') return [];
    const value = String(constant);
    return [{
      value,
      label: typeof title === 'string' && title !== value ? `${value} (${visible(title)})` : value,
    }];
  });
}

function describeType(schema: Readonly<Record<string, unknown>>): string {
  switch (schema.type) {
    case 'boolean':
      return 'yes/no';
    case 'integer':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'array':
      return 'several, separated by commas';
    default:
      return typeof schema.format === 'string' ? `text, ${schema.format}` : 'text';
  }
}

/** One typed line as the field's value: `undefined` for an empty line (default or left out). */
export function parseField(
  typed: string,
  schema: Readonly<Record<string, unknown>>,
): { value: string | number | boolean | string[] | undefined } | { error: string } {
  if (typed === '') return { value: undefined };
  const choices = enumChoices(schema);
  const choose = (text: string): string | undefined => {
    if (choices === undefined) return text;
    const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
    return choices.find((choice) => choice.value === text)?.value ?? choices[index]?.value;
  };
  switch (schema.type) {
    case 'boolean': {
      const answer = typed.toLowerCase();
      if (['y', 'yes', 'true'].includes(answer)) return { value: true };
      if (['n', 'no', 'false'].includes(answer)) return { value: false };
      return { error: 'answer yes or no' };
    }
    case 'integer':
    case 'number': {
      const value = Number(typed);
      if (!Number.isFinite(value)) return { error: 'type a number' };
      if (schema.type === 'integer' && !Number.isInteger(value)) return { error: 'type a whole number' };
      return { value };
    }
    case 'array': {
      const parts = typed.split(',').map((part) => part.trim()).filter((part) => part !== '');
      const chosen = parts.map(choose);
      if (chosen.some((value) => value === undefined)) return { error: 'choose from the list' };
      return { value: chosen as string[] };
    }
    default: {
      const value = choose(typed);
      if (value === undefined) return { error: 'choose one of the list (its value or its number)' };
      return { value };
    }
  }
}
