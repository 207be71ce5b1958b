#!/usr/bin/env node
// Prints the workspace's package map: each package, what it holds, and the workspace packages it
// depends on. Stands in for the demo until the `claw` app can run one.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dirs = ['packages', 'apps']
  .flatMap((group) => readdirSync(path.join(root, group)).map((name) => `${group}/${name}`))
  .concat('eval', 'bench')
  .filter((dir) => existsSync(path.join(root, dir, 'package.json')));

const manifests = dirs.map((dir) => ({
  dir,
  ...JSON.parse(readFileSync(path.join(root, dir, 'package.json'), 'utf8')),
}));
const names = new Set(manifests.map((manifest) => manifest.name));

console.log('claw — packages and apps\n');
for (const manifest of manifests) {
  const uses = Object.keys({ ...manifest.dependencies }).filter((name) => names.has(name));
  const built = existsSync(path.join(root, manifest.dir, 'dist')) ? 'built' : 'not built';
  const kind = manifest.private ? 'app' : 'library';
  const bin = manifest.bin ? ` (bin: ${Object.keys(manifest.bin).join(', ')})` : '';
  console.log(`${manifest.name}${bin} — ${kind}, ${built}`);
  console.log(`  ${manifest.description}`);
  if (uses.length > 0) console.log(`  uses: ${uses.join(', ')}`);
}
