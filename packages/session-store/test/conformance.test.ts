import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import nodePath from 'node:path';
import { FileSessionLog, MemoryRelay, MemorySessionLog } from '../src/index.js';
import { describeSessionLog, describeSessionRelay } from '../src/testing/index.js';

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

// The shared log in memory is a log like the others, and a relay (SCALE-4, LIFE-1).
const memoryRelay = {
  create: async () => new MemoryRelay({ instanceId: 'first' }),
  // Another process on the same sessions.
  reopen: async (log: unknown) => (log as MemoryRelay).instance(),
};
describeSessionLog('MemoryRelay', memoryRelay);
describeSessionRelay('MemoryRelay', memoryRelay);
