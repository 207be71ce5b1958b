// Module hooks (registered by preload.mjs on Node 20): the conformance suite's bundle gets a
// node:fs that also exports `globSync`, which only its `tier-check` command calls (it throws
// here). Every other export is node:fs's own.
import fs from 'node:fs';

const names = Object.keys(fs).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name));
const source = [
  "import fs from 'node:fs';",
  'export default fs;',
  `export const { ${names.join(', ')} } = fs;`,
  'export function globSync() {',
  "  throw new Error('fs.globSync needs Node 22 (the conformance suite uses it for tier-check only)');",
  '}',
].join('\n');
const shim = `data:text/javascript,${encodeURIComponent(source)}`;

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes('/@modelcontextprotocol/conformance/') === true;
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
