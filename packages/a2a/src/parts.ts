import type { Artifact, Message, Part } from '@a2a-js/sdk';

/** The text of one part: text as is, data as JSON, files by name and address. */
export function partText(part: Part): string {
  const content = part.content;
  if (content === undefined) return '';
  switch (content.$case) {
    case 'text':
      return content.value;
    case 'data':
      return JSON.stringify(content.value);
    case 'url':
      return `[file ${part.filename || '(unnamed)'}${part.mediaType ? ` (${part.mediaType})` : ''}: ${content.value}]`;
    case 'raw':
      return `[file ${part.filename || '(unnamed)'}${part.mediaType ? ` (${part.mediaType})` : ''}, ` +
        `${content.value.length} bytes, not shown]`;
    default:
      return '';
  }
}

/** The text of a message's parts, one per line. */
export function messageText(message: Message | undefined): string {
  if (message === undefined) return '';
  return message.parts.map(partText).filter((text) => text !== '').join('\n');
}

/** An artifact as a titled block of its parts' text. */
export function artifactText(artifact: Artifact): string {
  const title = artifact.name || artifact.artifactId;
  const body = artifact.parts.map(partText).filter((text) => text !== '').join('\n');
  return `[artifact ${title}]\n${body}`;
}

/** A text part (v1.0 shape). */
export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}
