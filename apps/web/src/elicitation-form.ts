// The form an MCP server asks the user to fill in (MCP-7, form mode), read from its requested
// schema: a flat object of strings (with a format, lengths), numbers and integers (with a range),
// booleans, single-choice enums (`enum`, `oneOf` with titles, the legacy `enumNames`) and
// multi-choice enums (arrays of them). The page checks what was entered before it sends it, so the
// user is told what to fix at once; the server checks again (the page decides nothing).
import type { ElicitationSchema } from './state/types.js';

export type FieldKind =
  | 'text'
  | 'email'
  | 'uri'
  | 'date'
  | 'date-time'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'choice'
  | 'choices'
  | 'unsupported';

export interface FormOption {
  value: string;
  label: string;
}

export interface FormField {
  name: string;
  kind: FieldKind;
  /** The schema's `title`, else the property's name. */
  label: string;
  description?: string;
  required: boolean;
  options: FormOption[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: string | number | boolean | string[];
}

/** What a field holds while it is edited: text for text and number inputs. */
export type FieldValue = string | boolean | string[];
export type FormValues = Record<string, FieldValue>;
export type FormContent = Record<string, string | number | boolean | string[]>;

const stringFormats = ['email', 'uri', 'date', 'date-time'] as const;

const numberOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;
const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** The titled or plain choices of an enum (`oneOf`/`anyOf` of {const, title}, or `enum`). */
function optionsOf(schema: Record<string, unknown>): FormOption[] | undefined {
  const titled = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(titled)) {
    return titled.flatMap((entry: unknown) => {
      const option = entry as { const?: unknown; title?: unknown } | null;
      const value = textOf(option?.const);
      return value === undefined ? [] : [{ value, label: textOf(option?.title) ?? value }];
    });
  }
  if (!Array.isArray(schema.enum)) return undefined;
  const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
  return schema.enum.flatMap((entry: unknown, index) => {
    const value = textOf(entry);
    return value === undefined ? [] : [{ value, label: textOf(names[index]) ?? value }];
  });
}

function kindOf(schema: Record<string, unknown>): { kind: FieldKind; options: FormOption[] } {
  const none: FormOption[] = [];
  switch (schema.type) {
    case 'boolean':
      return { kind: 'boolean', options: none };
    case 'number':
    case 'integer':
      return { kind: schema.type, options: none };
    case 'string': {
      const options = optionsOf(schema);
      if (options !== undefined) return { kind: 'choice', options };
      const format = (stringFormats as readonly unknown[]).includes(schema.format)
        ? (schema.format as FieldKind)
        : 'text';
      return { kind: format, options: none };
    }
    case 'array': {
      const items = schema.items;
      const options = typeof items === 'object' && items !== null
        ? optionsOf(items as Record<string, unknown>)
        : undefined;
      return options === undefined
        ? { kind: 'unsupported', options: none }
        : { kind: 'choices', options };
    }
    default:
      return { kind: 'unsupported', options: none };
  }
}

/** The form's fields, in the order the server listed them. */
export function formFields(schema: ElicitationSchema): FormField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { kind, options } = kindOf(property);
    const given = property.default;
    const defaultValue =
      typeof given === 'string' || typeof given === 'number' || typeof given === 'boolean'
        ? given
        : Array.isArray(given) && given.every((entry) => typeof entry === 'string')
          ? given
          : undefined;
    const field: FormField = {
      name,
      kind,
      label: textOf(property.title) ?? name,
      required: required.has(name),
      options,
    };
    const description = textOf(property.description);
    if (description !== undefined && description !== '') field.description = description;
    const limits = ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems'] as const;
    for (const limit of limits) {
      const value = numberOf(property[limit]);
      if (value !== undefined) field[limit] = value;
    }
    if (defaultValue !== undefined) field.default = defaultValue;
    return field;
  });
}

/** What the fields hold at first: their defaults, else empty (a checkbox unticked). */
export function initialValues(fields: readonly FormField[]): FormValues {
  const values: FormValues = {};
  for (const field of fields) {
    const given = field.default;
    switch (field.kind) {
      case 'boolean':
        values[field.name] = given === true;
        break;
      case 'choices':
        values[field.name] = Array.isArray(given) ? [...given] : [];
        break;
      case 'date-time':
        values[field.name] = typeof given === 'string' ? localDateTime(given) : '';
        break;
      case 'text':
      case 'email':
      case 'uri':
      case 'date':
      case 'number':
      case 'integer':
      case 'choice':
      case 'unsupported':
        values[field.name] = given === undefined || Array.isArray(given) ? '' : String(given);
    }
  }
  return values;
}

/** An RFC 3339 date-time as a `datetime-local` input shows it (this page's time zone). */
function localDateTime(text: string): string {
  const time = Date.parse(text);
  if (Number.isNaN(time)) return '';
  const local = new Date(time - new Date(time).getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const datePattern = /^\d{4}-\d{2}-\d{2}$/;

function isUrl(text: string): boolean {
  try {
    return new URL(text).protocol !== '';
  } catch {
    return false;
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function range(field: FormField): string {
  const { minimum, maximum } = field;
  if (minimum !== undefined && maximum !== undefined) return `from ${minimum} to ${maximum}`;
  if (minimum !== undefined) return `of at least ${minimum}`;
  return `of at most ${String(maximum)}`;
}

/** The value to send for one field, or why it cannot be sent; undefined: left out. */
function checkField(
  field: FormField,
  value: FieldValue | undefined,
): { value?: FormContent[string]; error?: string } {
  if (field.kind === 'boolean') return { value: value === true };
  if (field.kind === 'choices') {
    const picked = Array.isArray(value) ? value : [];
    if (picked.length === 0 && !field.required) return {};
    const { minItems, maxItems } = field;
    if (picked.length === 0 || (minItems !== undefined && picked.length < minItems)) {
      return { error: `Choose at least ${plural(Math.max(1, minItems ?? 1), 'option')}.` };
    }
    if (maxItems !== undefined && picked.length > maxItems) {
      return { error: `Choose at most ${plural(maxItems, 'option')}.` };
    }
    return { value: picked };
  }
  if (field.kind === 'unsupported') {
    // Left out when it may be; the server would refuse a form without it otherwise.
    return field.required
      ? { error: 'This page cannot fill in this field: decline, or answer elsewhere.' }
      : {};
  }
  const text = typeof value === 'string' ? value : '';
  if (text.trim() === '') return field.required ? { error: 'This field is required.' } : {};
  switch (field.kind) {
    case 'number':
    case 'integer': {
      const number = Number(text.trim());
      if (!Number.isFinite(number)) return { error: 'Enter a number.' };
      if (field.kind === 'integer' && !Number.isInteger(number)) {
        return { error: 'Enter a whole number.' };
      }
      const tooLow = field.minimum !== undefined && number < field.minimum;
      if (tooLow || (field.maximum !== undefined && number > field.maximum)) {
        return { error: `Enter a number ${range(field)}.` };
      }
      return { value: number };
    }
    case 'choice':
      return field.options.some((option) => option.value === text)
        ? { value: text }
        : { error: 'Choose one of the options.' };
    case 'email':
      return emailPattern.test(text.trim())
        ? { value: text.trim() }
        : { error: 'Enter an email address, like name@example.com.' };
    case 'uri':
      return isUrl(text.trim())
        ? { value: text.trim() }
        : { error: 'Enter a full address, like https://example.com/.' };
    case 'date':
      return datePattern.test(text) && !Number.isNaN(Date.parse(text))
        ? { value: text }
        : { error: 'Enter a date, like 2025-03-01.' };
    case 'date-time': {
      // A `datetime-local` input gives no time zone; the schema's format wants one.
      const time = Date.parse(text);
      return Number.isNaN(time)
        ? { error: 'Enter a date and a time.' }
        : { value: new Date(time).toISOString() };
    }
    case 'text': {
      const length = [...text].length;
      if (field.minLength !== undefined && length < field.minLength) {
        return { error: `Enter at least ${plural(field.minLength, 'character')}.` };
      }
      if (field.maxLength !== undefined && length > field.maxLength) {
        return { error: `Enter at most ${plural(field.maxLength, 'character')}.` };
      }
      return { value: text };
    }
  }
}

/**
 * Checks what was entered: the content to send (fields left empty are left out, so the server's
 * defaults apply), or a message for each field that must be fixed.
 */
export function checkForm(
  fields: readonly FormField[],
  values: Readonly<FormValues>,
): { ok: true; content: FormContent } | { ok: false; errors: Record<string, string> } {
  const content: FormContent = {};
  const errors: Record<string, string> = {};
  for (const field of fields) {
    const checked = checkField(field, values[field.name]);
    if (checked.error !== undefined) errors[field.name] = checked.error;
    else if (checked.value !== undefined) content[field.name] = checked.value;
  }
  return Object.keys(errors).length === 0 ? { ok: true, content } : { ok: false, errors };
}

/** A field's limits in words, shown under it (undefined: none worth saying). */
export function fieldHint(field: FormField): string | undefined {
  const parts: string[] = [];
  if (field.kind === 'number' || field.kind === 'integer') {
    if (field.kind === 'integer') parts.push('a whole number');
    if (field.minimum !== undefined || field.maximum !== undefined) parts.push(range(field));
  }
  if (field.minLength !== undefined) parts.push(`at least ${plural(field.minLength, 'character')}`);
  if (field.maxLength !== undefined) parts.push(`at most ${plural(field.maxLength, 'character')}`);
  if (field.kind === 'choices') {
    if (field.minItems !== undefined) parts.push(`choose at least ${field.minItems}`);
    if (field.maxItems !== undefined) parts.push(`choose at most ${field.maxItems}`);
  }
  return parts.length === 0 ? undefined : parts.join(', ');
}
