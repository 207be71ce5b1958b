import { readFile, writeFile } from 'node:fs/promises';
import nodePath from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuditLogError,
  FileAuditLog,
  MemoryAuditLog,
  nodeFileSystem,
  type ApprovalFileSystem,
  type AuditEntry,
} from '../src/index.js';
import { removeTempDirs, tempDir } from './fixtures.js';

afterEach(removeTempDirs);

function entry(index: number, overrides: Partial<AuditEntry> = {}): AuditEntry {
  return {
    time: `2030-01-01T00:00:${String(index).padStart(2, '0')}.000Z`,
    requestId: `request-${index}`,
    sessionId: 'session-1',
    toolName: 'bash',
    digest: 'digest',
    decision: 'allow_once',
    ...overrides,
  };
}

describe('FileAuditLog (APR-4)', () => {
  it('appends one JSON line per entry to <workDir>/.claw/audit.jsonl, in order', async () => {
    const workDir = await tempDir();
    const log = new FileAuditLog({ workDir });
    const entries = Array.from({ length: 30 }, (_unused, index) =>
      entry(index, { decision: index % 2 === 0 ? 'deny' : 'grant_reuse', reason: `because ${index}` }));
    await Promise.all(entries.map((each) => log.record(each)));

    const file = nodePath.join(workDir, '.claw', 'audit.jsonl');
    expect(log.file).toBe(file);
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => JSON.parse(line) as AuditEntry)).toEqual(entries);
  });

  it('never rewrites what is already there', async () => {
    const workDir = await tempDir();
    await new FileAuditLog({ workDir }).record(entry(1));
    await new FileAuditLog({ workDir }).record(entry(2));
    const lines = (await readFile(nodePath.join(workDir, '.claw', 'audit.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as AuditEntry).requestId)).toEqual(['request-1', 'request-2']);
  });

  it('reports an append that fails, naming the file, and keeps working afterwards', async () => {
    const workDir = await tempDir();
    await writeFile(nodePath.join(workDir, '.claw'), 'a file where the folder should be');
    const log = new FileAuditLog({ workDir });
    const failure = log.record(entry(1));
    await expect(failure).rejects.toBeInstanceOf(AuditLogError);
    await expect(failure).rejects.toMatchObject({
      code: 'audit_write_failed',
      file: nodePath.join(workDir, '.claw', 'audit.jsonl'),
    });
    await expect(log.record(entry(2))).rejects.toMatchObject({ code: 'audit_write_failed' });
  });
});

describe('FileAuditLog: writes grouped, the file kept open', () => {
  it('opens the file once and writes entries recorded together in one write, in order', async () => {
    const workDir = await tempDir();
    const calls: string[] = [];
    const fileSystem: ApprovalFileSystem = {
      ...nodeFileSystem,
      mkdir: (path, options) => {
        calls.push('mkdir');
        return nodeFileSystem.mkdir(path, options);
      },
      open: async (path, flags, mode) => {
        calls.push(`open ${flags}`);
        const handle = await nodeFileSystem.open(path, flags, mode);
        return {
          writeFile: (data, encoding) => {
            calls.push('write');
            return handle.writeFile(data, encoding);
          },
          appendSync: (data) => {
            calls.push('write');
            handle.appendSync?.(data);
          },
          sync: () => handle.sync(),
          close: () => {
            calls.push('close');
            return handle.close();
          },
        };
      },
    };
    const log = new FileAuditLog({ workDir, fileSystem });
    const first = Array.from({ length: 4 }, (_unused, index) => entry(index));
    await Promise.all(first.map((each) => log.record(each)));
    // A wave later: the same open file, no new mkdir.
    const second = Array.from({ length: 4 }, (_unused, index) => entry(10 + index));
    await Promise.all(second.map((each) => log.record(each)));
    // Recorded a few promise steps apart in one tick, as a wave's gate checks end: one write.
    const third = Array.from({ length: 4 }, (_unused, index) => entry(20 + index));
    await Promise.all(third.map(async (each, index) => {
      for (let step = 0; step < index * 3; step += 1) await Promise.resolve();
      await log.record(each);
    }));
    await log.close();

    // The state folder and its ignore file first (once), then the log: one open, one write a tick.
    expect(calls).toEqual(['mkdir', 'open wx', 'write', 'close', 'open a', 'write', 'write', 'write', 'close']);
    const lines = (await readFile(log.file, 'utf8')).trim().split('\n');
    expect(lines.map((line) => JSON.parse(line) as AuditEntry)).toEqual([
      ...first,
      ...second,
      ...third,
    ]);
  });
});

describe('MemoryAuditLog', () => {
  it('keeps entries in order and hands out copies', async () => {
    const log = new MemoryAuditLog();
    await log.record(entry(1));
    await log.record(entry(2, { decision: 'policy_deny', reason: 'no' }));
    const entries = log.entries;
    expect(entries).toEqual([entry(1), entry(2, { decision: 'policy_deny', reason: 'no' })]);
    const first = entries[0];
    if (first !== undefined) first.requestId = 'changed';
    expect(log.entries[0]?.requestId).toBe('request-1');
  });
});
