import { createHash } from 'node:crypto';

/** The longest tool name model APIs accept (Chat Completions: `^[a-zA-Z0-9_-]{1,64}$`). */
export const maxToolNameLength = 64;

/** A tool of a server, by the names the configuration and the server give them. */
export interface RemoteToolName {
  server: string;
  tool: string;
}

const allowedCharacter = /^[A-Za-z0-9_-]$/;
const hashLength = 8;

/** Each character outside `[A-Za-z0-9_-]` (a code point, so an emoji is one) becomes `_`. */
export function sanitizeNamePart(part: string): string {
  let result = '';
  for (const character of part) result += allowedCharacter.test(character) ? character : '_';
  return result;
}

/**
 * The names claw registers remote tools under (MCP-2): `mcp_<server>_<tool>`, every character
 * outside `[A-Za-z0-9_-]` mapped to `_`. A name longer than 64 characters, or one that two tools
 * would share, gets a short hash of the original server and tool names instead of its end
 * (`mcp_<start>_<8 hex>`), so that no two tools ever share a name and the same tools always get
 * the same names. Of tools sharing a name, the one whose names needed no mapping (else the
 * first) keeps it plain. Returns one name per entry, in order.
 */
export function assignToolNames(entries: readonly RemoteToolName[]): string[] {
  const bases = entries.map(({ server, tool }) =>
    `mcp_${sanitizeNamePart(server)}_${sanitizeNamePart(tool)}`);
  const names: string[] = bases.map(() => '');
  const hashed = new Set<number>();
  const groups = new Map<string, Array<{ index: number; exact: boolean }>>();
  entries.forEach((entry, index) => {
    const base = bases[index] as string;
    if (base.length > maxToolNameLength) {
      hashed.add(index);
      return;
    }
    const group = groups.get(base) ?? [];
    group.push({ index, exact: isExact(entry) });
    groups.set(base, group);
  });
  for (const [base, group] of groups) {
    const keeper = (group.find((member) => member.exact) ?? group[0])?.index;
    if (keeper !== undefined) names[keeper] = base;
    for (const { index } of group) if (index !== keeper) hashed.add(index);
  }
  const taken = new Set(names.filter((name) => name !== ''));
  for (const index of [...hashed].sort((a, b) => a - b)) {
    const entry = entries[index] as RemoteToolName;
    names[index] = uniqueHashedName(bases[index] as string, entry, taken);
    taken.add(names[index]);
  }
  return names;
}

function isExact(entry: RemoteToolName): boolean {
  return sanitizeNamePart(entry.server) === entry.server &&
    sanitizeNamePart(entry.tool) === entry.tool;
}

function uniqueHashedName(base: string, entry: RemoteToolName, taken: ReadonlySet<string>): string {
  const digest = createHash('sha256').update(`${entry.server}\u0000${entry.tool}`).digest('hex');
  // Two different tools with the same first 8 hex digits: take more digits.
  for (let length = hashLength; length <= digest.length; length += 4) {
    const name = `${base.slice(0, maxToolNameLength - length - 1)}_${digest.slice(0, length)}`;
    if (!taken.has(name)) return name;
  }
  // Only the same server and tool listed twice can get here: number them.
  for (let counter = 2; ; counter += 1) {
    const suffix = `_${digest.slice(0, hashLength)}_${counter}`;
    const name = `${base.slice(0, maxToolNameLength - suffix.length)}${suffix}`;
    if (!taken.has(name)) return name;
  }
}
