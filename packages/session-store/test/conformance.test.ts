import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import nodePath from 'node:path';
import { FileSessionLog, MemorySessionLog } from '../src/index.js';
import { describeSessionLog } from '../src/testing/index.js';

const folders: string[] = [];

describeSessionLog('FileSessionLog', {
  create: async () => {
    const folder = await mkdtemp(nodePath.join(os.tmpdir(), 'claw-conformance-'));
    folders.push(folder);
    return new FileSessionLog({ directory: nodePath.join(folder, '.claw', 'sessions') });
  },
  reopen: async (log) => new FileSessionLog({ directory: (log as FileSessionLog).directory }),
  cleanUp: async () => {
    await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
  },
});

describeSessionLog('MemorySessionLog', {
  create: async () => new MemorySessionLog(),
  reopen: async (log) => log,
});
