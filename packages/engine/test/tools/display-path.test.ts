import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { displayPath } from '../../src/tools/files.js';

describe('displayPath', () => {
  // The definition: the path relative to the workspace root, `.` for the root itself.
  const byRelative = (workDir: string, absolutePath: string): string =>
    relative(resolve(workDir), absolutePath) || '.';
  const cases: Array<[string, string]> = [
    ['/srv/ws', '/srv/ws/a.txt'],
    ['/srv/ws', '/srv/ws/src/deep/b.ts'],
    ['/srv/ws', '/srv/ws'],
    ['/srv/ws/', '/srv/ws/a.txt'],
    ['/srv/ws', '/srv/ws/.claw/config.json'],
    ['/srv/ws', '/srv/ws/..data/x'],
    ['/srv/ws', '/srv/ws-evil/x'],
    ['/', '/etc/hosts'],
    ['/', '/'],
    ['relative/ws', resolve('relative/ws/c.txt')],
  ];
  it.each(cases)('displayPath(%j, %j) is what path.relative gives', (workDir, absolutePath) => {
    expect(displayPath(workDir, absolutePath)).toBe(byRelative(workDir, absolutePath));
  });
});
