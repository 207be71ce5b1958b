import { CappedOutput } from '@claw/core';

/** What a content block of an MCP result may look like (only the fields claw reads). */
export interface ContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  title?: string;
  description?: string;
  size?: number;
  resource?: ResourceContents;
}

/** One item of `resources/read` (or an embedded resource): text or a base64 blob. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

const cutAdvice = 'ask the tool for less (a narrower query, a smaller range) to see the rest';

/**
 * Cuts `text` to at most `maxBytes` (UTF-8) the way bash output is cut (the start and the end
 * kept, the middle replaced by a note saying how much was cut).
 */
export function capOutput(text: string, maxBytes: number, label = 'output'): string {
  const capped = new CappedOutput(maxBytes);
  capped.push(Buffer.from(text, 'utf8'));
  return capped.text(label, cutAdvice);
}

/** Bytes a base64 string decodes to. */
export function base64Bytes(data: string): number {
  const compact = data.replace(/\s+/g, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((compact.length * 3) / 4) - padding);
}

/**
 * The text the model gets for a tool result's content (MCP-2): text blocks as they are, every
 * other block described on a line of its own (its type, media type and size), joined by newlines.
 * Without content, the structured content as JSON.
 */
export function formatContent(
  content: readonly ContentBlock[] | undefined,
  structuredContent?: unknown,
): string {
  const parts = (content ?? []).map(describeBlock);
  if (parts.length === 0 && structuredContent !== undefined) {
    return JSON.stringify(structuredContent, null, 2);
  }
  return parts.join('\n');
}

/** The contents of `resources/read`, as text (each blob described). */
export function formatResourceContents(contents: readonly ResourceContents[]): string {
  return contents.map(describeResource).join('\n');
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType ?? 'unknown type'}, ` +
        `${formatBytes(base64Bytes(block.data ?? ''))}]`;
    case 'resource_link': {
      const size = block.size === undefined ? undefined : formatBytes(block.size);
      const details = [block.mimeType, size].filter((detail) => detail !== undefined);
      const label = block.title ?? block.name;
      return `[resource link: ${label === undefined ? '' : `${label} `}${block.uri ?? ''}` +
        `${details.length === 0 ? '' : ` (${details.join(', ')})`}` +
        `${block.description === undefined ? '' : ` — ${block.description}`}]`;
    }
    case 'resource':
      return block.resource === undefined ? '[resource]' : describeResource(block.resource);
    default:
      return `[${block.type} content, not shown]`;
  }
}

function describeResource(resource: ResourceContents): string {
  const type = resource.mimeType ?? 'unknown type';
  if (resource.text !== undefined) {
    return `[resource ${resource.uri} (${type})]\n${resource.text}`;
  }
  return `[resource ${resource.uri} (${type}, ${formatBytes(base64Bytes(resource.blob ?? ''))})]`;
}

function formatBytes(bytes: number): string {
  return `${bytes} byte${bytes === 1 ? '' : 's'}`;
}
