import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AuditLogError,
  Gate,
  GrantStoreError,
  argumentDigest,
  grantKey,
  type ApprovalHandler,
  type ApprovalPrompt,
  type AuditEntry,
  type Grant,
  type GrantKeyParts,
} from '@claw/approval';
import type { ApprovalDecision, ApprovalRequest } from '@claw/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PgAuditLog, PgGrantStore, type PgSessionLog } from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, openLog, sharedCluster } from './fixtures.js';

const workspace = 'ws-shared';
// The same workspace, mounted at a different path on each instance.
const pathOnA = '/mnt/a/project';
const pathOnB = '/srv/b/checkout';

/** Two instances on one database: each with its own pool (from its own log). */
async function twoInstances(url: string): Promise<{ a: PgSessionLog; b: PgSessionLog }> {
  return { a: await openLog(url, { instanceId: 'a' }), b: await openLog(url, { instanceId: 'b' }) };
}

function grantFor(
  parts: Partial<GrantKeyParts> & { workDir: string },
  extra: Partial<Pick<Grant, 'requestId' | 'approvedAt' | 'expiresAt'>> = {},
): Grant {
  const full: GrantKeyParts = {
    sessionId: parts.sessionId ?? 'session-1',
    workDir: parts.workDir,
    toolName: parts.toolName ?? 'write_file',
    digest: parts.digest ?? 'digest-1',
  };
  return {
    key: grantKey(full),
    ...full,
    requestId: extra.requestId ?? 'request-1',
    decision: 'allow_session',
    approvedAt: extra.approvedAt ?? '2030-01-01T00:00:00.000Z',
    ...(extra.expiresAt === undefined ? {} : { expiresAt: extra.expiresAt }),
  };
}

/** The same grant as the instance mounted at `workDir` names it. */
function seenFrom(grant: Grant, workDir: string): Grant {
  return { ...grant, workDir, key: grantKey({ ...grant, workDir }) };
}

async function grantRows(log: PgSessionLog) {
  type Row = { workspace: string; digest: string; body: Record<string, unknown>; revoked: boolean };
  const result = await log.pool.query<Row>(
    'SELECT workspace, digest, body, revoked_at IS NOT NULL AS revoked FROM claw_grants ORDER BY created_at, digest',
  );
  return result.rows;
}

/** Answers from a script and records the prompts it was shown. */
class ScriptedHandler implements ApprovalHandler {
  readonly prompts: ApprovalPrompt[] = [];

  constructor(private readonly answers: ApprovalDecision[]) {}

  async approve(prompt: ApprovalPrompt, signal: AbortSignal): Promise<ApprovalDecision> {
    signal.throwIfAborted();
    this.prompts.push(prompt);
    const answer = this.answers.shift();
    if (answer === undefined) throw new Error(`no scripted answer for ${prompt.toolName}`);
    return answer;
  }
}

function writeRequest(workDir: string, sessionId = 'session-1'): ApprovalRequest {
  const args = { path: 'notes.txt', content: 'hello' };
  return {
    sessionId,
    workDir,
    toolCall: { id: 'call-1', name: 'write_file', arguments: JSON.stringify(args) },
    risk: 'mutating',
    arguments: args,
  };
}

const never = () => new AbortController().signal;

describe.skipIf(!postgresAvailable())('PgGrantStore and PgAuditLog (SCALE-4)', () => {
  const { freshDatabase } = sharedCluster();
  const folders: string[] = [];
  afterEach(async () => {
    await closeLogs();
    await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
  });

  async function tempFolder(): Promise<string> {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'claw-pg-grants-'));
    folders.push(folder);
    return folder;
  }

  describe('PgGrantStore', () => {
    it('shares a grant between two instances that mount the workspace at different paths', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const other = new PgGrantStore({ pool: b.pool, workspace: 'ws-other', workDir: pathOnB });
      const grant = grantFor({ workDir: pathOnA });

      await storeA.put(grant);
      expect(await storeA.get(grant.key)).toEqual(grant);
      // B asks with the key the gate builds there: its own path in it.
      const onB = seenFrom(grant, pathOnB);
      expect(await storeB.get(onB.key)).toEqual(onB);
      expect(await storeB.list()).toEqual([onB]);
      // A's path means nothing on B, and another workspace id sees nothing.
      expect(await storeB.get(grant.key)).toBeUndefined();
      expect(await other.get(onB.key)).toBeUndefined();
      expect(await other.list()).toEqual([]);
      // The row is keyed by the logical workspace, not by either path.
      const logical = grantKey({ ...grant, workDir: workspace });
      expect(await grantRows(a)).toEqual([
        { workspace, digest: logical, body: { ...grant, key: logical, workDir: workspace }, revoked: false },
      ]);
    });

    it('resolves a relative workDir the way the gate resolves the request\'s', async () => {
      const { a } = await twoInstances(await freshDatabase());
      const store = new PgGrantStore({ pool: a.pool, workspace, workDir: 'relative/folder' });
      expect(store.workDir).toBe(path.resolve('relative/folder'));
      const grant = grantFor({ workDir: path.resolve('relative/folder') });
      await store.put(grant);
      expect((await grantRows(a))[0]?.digest).toBe(grantKey({ ...grant, workDir: workspace }));
      expect(() => new PgGrantStore({ pool: a.pool, workspace: '', workDir: pathOnA })).toThrow(RangeError);
    });

    it('a revoke on one instance denies the next get on the other at once, and keeps the row marked', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const grant = grantFor({ workDir: pathOnA });
      const onB = seenFrom(grant, pathOnB);
      await storeA.put(grant);
      expect(await storeB.get(onB.key)).toEqual(onB);
      expect(await storeA.get(grant.key)).toEqual(grant);

      await storeB.delete(onB.key);
      expect(await storeA.get(grant.key)).toBeUndefined();
      expect(await storeB.get(onB.key)).toBeUndefined();
      expect(await storeA.list()).toEqual([]);
      expect(await storeB.list()).toEqual([]);
      // Kept for audit, marked revoked; deleting again (or a key never granted) changes nothing.
      expect((await grantRows(a)).map((row) => row.revoked)).toEqual([true]);
      await storeA.delete(grant.key);
      await storeA.delete(grantKey({ ...grant, digest: 'never-granted' }));
      expect((await grantRows(a)).map((row) => row.revoked)).toEqual([true]);
    });

    it('put after a revoke makes the grant live again, with the new body', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const first = grantFor({ workDir: pathOnA }, { requestId: 'request-1' });
      await storeA.put(first);
      await storeA.delete(first.key);
      const second = grantFor({ workDir: pathOnB }, { requestId: 'request-2', approvedAt: '2030-01-02T00:00:00.000Z' });
      await storeB.put(second);
      expect(await storeA.get(first.key)).toEqual(seenFrom(second, pathOnA));
      expect(await storeB.get(second.key)).toEqual(second);
      expect((await grantRows(a)).map((row) => row.revoked)).toEqual([false]);
    });

    it('an expired grant is not returned by get, which revokes it; list shows it until then', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const expiresAt = '2030-01-01T01:00:00.000Z';
      const grant = grantFor({ workDir: pathOnA }, { expiresAt });
      await storeA.put(grant);

      const before = new Date(Date.parse(expiresAt) - 1);
      const at = new Date(expiresAt);
      expect(await storeB.get(seenFrom(grant, pathOnB).key, before)).toEqual(seenFrom(grant, pathOnB));
      // The interface lists expired grants too, until a get removes them.
      expect(await storeA.list()).toEqual([grant]);
      expect(await storeA.get(grant.key, at)).toBeUndefined();
      expect(await storeB.get(seenFrom(grant, pathOnB).key, before)).toBeUndefined();
      expect(await storeA.list()).toEqual([]);
      expect((await grantRows(a)).map((row) => row.revoked)).toEqual([true]);
    });

    it('an expired grant that another instance puts again meanwhile is not revoked', async () => {
      const url = await freshDatabase();
      const { b } = await twoInstances(url);
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const old = grantFor({ workDir: pathOnA }, { expiresAt: '2030-01-01T01:00:00.000Z' });
      const renewed = grantFor({ workDir: pathOnB }, { requestId: 'request-2', expiresAt: '2030-01-01T03:00:00.000Z' });
      // A's pool runs B's put between A reading the expired grant and A revoking it.
      const poolA = new pg.Pool({ connectionString: url, max: 2 });
      try {
        const query = poolA.query.bind(poolA) as (text: string, values: unknown[]) => Promise<pg.QueryResult>;
        let raced = false;
        poolA.query = (async (text: string, values: unknown[]) => {
          if (!raced && text.trimStart().startsWith('UPDATE')) {
            raced = true;
            await storeB.put(renewed);
          }
          return query(text, values);
        }) as unknown as typeof poolA.query;
        const storeA = new PgGrantStore({ pool: poolA, workspace, workDir: pathOnA });
        await storeA.put(old);
        expect(await storeA.get(old.key, new Date('2030-01-01T02:00:00.000Z'))).toBeUndefined();
        expect(raced).toBe(true);
        expect(await storeA.get(old.key, new Date('2030-01-01T02:00:00.000Z'))).toEqual(seenFrom(renewed, pathOnA));
      } finally {
        await poolA.end();
      }
    });

    it('keeps keys that are not grantKey JSON for this workspace path as they are (opaque)', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      const opaque: Grant = { ...grantFor({ workDir: pathOnA }), key: 'not json [at all' };
      const notFour: Grant = { ...grantFor({ workDir: pathOnA, digest: 'd2' }), key: JSON.stringify(['only', 'three', 'parts']) };
      // A key in grantKey's form that names another folder: not this workspace's grant.
      const elsewhere = grantFor({ workDir: '/elsewhere', digest: 'd3' });
      for (const grant of [opaque, notFour, elsewhere]) await storeA.put(grant);

      expect(await storeB.get(opaque.key)).toEqual(opaque);
      expect(await storeB.get(notFour.key)).toEqual(notFour);
      expect(await storeB.get(elsewhere.key)).toEqual(elsewhere);
      expect(await storeA.get(seenFrom(elsewhere, pathOnA).key)).toBeUndefined();
      expect(await storeB.list()).toEqual([opaque, notFour, elsewhere]);
      expect((await grantRows(a)).map((row) => row.digest)).toEqual([opaque.key, notFour.key, elsewhere.key]);
      await storeB.delete(opaque.key);
      expect(await storeA.get(opaque.key)).toBeUndefined();
    });

    it('lists in the order added: a replaced grant keeps its place, one put again after a revoke goes last', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const storeA = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: pathOnB });
      // Digests in the reverse order of adding, so that an order by key would show.
      const [first, second, third] = ['z', 'y', 'x'].map((digest) => grantFor({ workDir: pathOnA, digest })) as [Grant, Grant, Grant];
      await storeA.put(first);
      await storeB.put(seenFrom(second, pathOnB));
      await storeA.put(third);
      expect(await storeA.list()).toEqual([first, second, third]);
      expect(await storeB.list()).toEqual([first, second, third].map((grant) => seenFrom(grant, pathOnB)));

      const replaced = { ...first, requestId: 'request-9' };
      await storeA.put(replaced);
      expect(await storeA.list()).toEqual([replaced, second, third]);
      await storeA.delete(second.key);
      await storeA.put(second);
      expect(await storeA.list()).toEqual([replaced, third, second]);
    });

    it('refuses a row that is not a grant, saying which and what to do', async () => {
      const { a } = await twoInstances(await freshDatabase());
      const store = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const grant = grantFor({ workDir: pathOnA });
      await store.put(grant);
      await a.pool.query('UPDATE claw_grants SET body = body - \'requestId\'');
      const error = await store.get(grant.key).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(GrantStoreError);
      expect(error).toMatchObject({ code: 'grant_store_corrupt', file: store.location });
      expect((error as Error).message).toMatch(/no text field "requestId".*Revoke it/);
      await expect(store.list()).rejects.toMatchObject({ code: 'grant_store_corrupt' });
    });

    it('checks a row as a grant file\'s grant is checked, whether its key names the workspace or not', async () => {
      const { a } = await twoInstances(await freshDatabase());
      const store = new PgGrantStore({ pool: a.pool, workspace, workDir: pathOnA });
      const translated = grantFor({ workDir: pathOnA });
      const opaque: Grant = { ...grantFor({ workDir: pathOnA, digest: 'd2' }), key: 'opaque key' };
      await store.put(translated);
      await store.put(opaque);
      // The key of a row that names the workspace gives its session, tool and digest; its body
      // must still hold them, as every stored grant does.
      for (const damage of ['body - \'toolName\'', 'jsonb_set(body, \'{sessionId}\', \'7\')']) {
        await a.pool.query(`UPDATE claw_grants SET body = ${damage}`);
        for (const key of [translated.key, opaque.key]) {
          const error = await store.get(key).catch((caught: unknown) => caught);
          expect(error, `${damage}: ${key}`).toBeInstanceOf(GrantStoreError);
          expect(error, `${damage}: ${key}`).toMatchObject({ code: 'grant_store_corrupt', file: store.location });
          expect((error as Error).message).toMatch(/its body has no text field "(toolName|sessionId)".*Revoke it/);
        }
        await a.pool.query('UPDATE claw_grants SET body = $1::jsonb WHERE digest = $2', [
          JSON.stringify({ ...translated, key: grantKey({ ...translated, workDir: workspace }), workDir: workspace }),
          grantKey({ ...translated, workDir: workspace }),
        ]);
        await a.pool.query('UPDATE claw_grants SET body = $1::jsonb WHERE digest = $2', [JSON.stringify(opaque), opaque.key]);
        expect(await store.list()).toEqual([translated, opaque]);
      }
    });

    it('turns every database failure into a GrantStoreError that says PostgreSQL could not be reached', async () => {
      const url = await freshDatabase();
      await twoInstances(url);
      const pool = new pg.Pool({ connectionString: url });
      const store = new PgGrantStore({ pool, workspace, workDir: pathOnA });
      const grant = grantFor({ workDir: pathOnA });
      await store.put(grant);
      await pool.end();
      const calls: Array<[string, () => Promise<unknown>, string]> = [
        ['get', () => store.get(grant.key), 'grant_store_read_failed'],
        ['list', () => store.list(), 'grant_store_read_failed'],
        ['put', () => store.put(grant), 'grant_store_write_failed'],
        ['delete', () => store.delete(grant.key), 'grant_store_write_failed'],
      ];
      for (const [name, call, code] of calls) {
        const error = await call().then(() => new Error(`${name} did not fail`), (caught: unknown) => caught);
        expect(error, name).toBeInstanceOf(GrantStoreError);
        expect(error, name).toMatchObject({ code, file: store.location });
        expect((error as Error).message, name).toMatch(/PostgreSQL could not be reached.*check that the database is up and reachable, then retry/);
        expect((error as Error).cause, name).toBeInstanceOf(Error);
      }
    });
  });

  describe('a Gate on PostgreSQL', () => {
    it('asks again on A after B revokes an allow_session grant made on A; one audit row per decision', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const [folderA, folderB] = [await tempFolder(), await tempFolder()];
      const handlerA = new ScriptedHandler(['allow_session', 'allow_once']);
      const handlerB = new ScriptedHandler([]);
      let next = 0;
      const gate = (log: PgSessionLog, workDir: string, handler: ApprovalHandler) => new Gate({
        handler,
        grants: new PgGrantStore({ pool: log.pool, workspace, workDir }),
        audit: new PgAuditLog({ pool: log.pool, instanceId: log.instanceId, workspace }),
        newRequestId: () => `request-${++next}`,
      });
      const gateA = gate(a, folderA, handlerA);
      const gateB = gate(b, folderB, handlerB);
      const storeB = new PgGrantStore({ pool: b.pool, workspace, workDir: folderB });

      expect(await gateA.check(writeRequest(folderA), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
      expect(await gateA.check(writeRequest(folderA), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
      // B serves the same session in its own mount of the workspace: the grant holds there too.
      expect(await gateB.check(writeRequest(folderB), { signal: never() })).toEqual({ allowed: true, decision: 'allow_session' });
      expect(handlerA.prompts).toHaveLength(1);
      expect(handlerB.prompts).toHaveLength(0);

      const [grant] = await storeB.list();
      expect(grant).toMatchObject({ workDir: folderB, toolName: 'write_file', requestId: 'request-1' });
      await storeB.delete(grant?.key ?? '');

      expect(await gateA.check(writeRequest(folderA), { signal: never() })).toEqual({ allowed: true, decision: 'allow_once' });
      expect(handlerA.prompts).toHaveLength(2);

      const digest = argumentDigest(writeRequest(folderA).toolCall.arguments);
      type AuditRow = { instance: string; session_id: string; entry: AuditEntry & { workspace: string } };
      const rows = await a.pool.query<AuditRow>(
        'SELECT instance, session_id, entry FROM claw_audit ORDER BY id',
      );
      expect(rows.rows.map((row) => [row.instance, row.session_id, row.entry.workspace, row.entry.decision])).toEqual([
        ['a', 'session-1', workspace, 'allow_session'],
        ['a', 'session-1', workspace, 'grant_reuse'],
        ['b', 'session-1', workspace, 'grant_reuse'],
        ['a', 'session-1', workspace, 'allow_once'],
      ]);
      expect(rows.rows.every((row) => row.entry.digest === digest && row.entry.toolName === 'write_file')).toBe(true);
      const fromB = await new PgAuditLog({ pool: b.pool, instanceId: 'b', workspace }).entries();
      expect(fromB.map((entry) => [entry.instance, entry.workspace, entry.requestId, entry.decision])).toEqual([
        ['a', workspace, 'request-1', 'allow_session'],
        ['a', workspace, 'request-2', 'grant_reuse'],
        ['b', workspace, 'request-3', 'grant_reuse'],
        ['a', workspace, 'request-4', 'allow_once'],
      ]);
    });

    it('does not allow a call whose grant lookup fails on an unreachable database', async () => {
      const url = await freshDatabase();
      await twoInstances(url);
      const folder = await tempFolder();
      const pool = new pg.Pool({ connectionString: url });
      await pool.end();
      const handler = new ScriptedHandler(['allow_session']);
      const gate = new Gate({ handler, grants: new PgGrantStore({ pool, workspace, workDir: folder }) });
      await expect(gate.check(writeRequest(folder), { signal: never() })).rejects.toBeInstanceOf(GrantStoreError);
      expect(handler.prompts).toHaveLength(0);
    });
  });

  describe('PgAuditLog', () => {
    const entry = (sessionId: string, requestId: string, decision: AuditEntry['decision'] = 'allow_once'): AuditEntry => ({
      time: '2030-01-01T00:00:00.000Z',
      requestId,
      sessionId,
      toolName: 'bash',
      digest: 'digest-1',
      decision,
      reason: 'run the tests',
    });

    it('records one row per entry naming the instance, the session and the workspace', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const auditA = new PgAuditLog({ pool: a.pool, instanceId: 'a', workspace });
      const auditB = new PgAuditLog({ pool: b.pool, instanceId: 'b', workspace });
      await auditA.record(entry('s1', 'r1'));
      await auditB.record(entry('s1', 'r2', 'deny'));
      const rows = await a.pool.query<{ instance: string; session_id: string; entry: unknown; recent: boolean }>(
        `SELECT instance, session_id, entry, at > now() - interval '1 minute' AS recent
         FROM claw_audit ORDER BY id`,
      );
      expect(rows.rows).toEqual([
        { instance: 'a', session_id: 's1', entry: { ...entry('s1', 'r1'), workspace }, recent: true },
        { instance: 'b', session_id: 's1', entry: { ...entry('s1', 'r2', 'deny'), workspace }, recent: true },
      ]);
      expect(await auditA.entries()).toEqual([
        { ...entry('s1', 'r1'), instance: 'a', workspace },
        { ...entry('s1', 'r2', 'deny'), instance: 'b', workspace },
      ]);
    });

    it('reads entries of its workspace oldest first, by session, and the newest `limit` of them', async () => {
      const { a, b } = await twoInstances(await freshDatabase());
      const auditA = new PgAuditLog({ pool: a.pool, instanceId: 'a', workspace });
      const auditB = new PgAuditLog({ pool: b.pool, instanceId: 'b', workspace });
      const elsewhere = new PgAuditLog({ pool: b.pool, instanceId: 'b', workspace: 'ws-other' });
      await auditA.record(entry('s1', 'r1'));
      await auditB.record(entry('s2', 'r2'));
      await elsewhere.record(entry('s1', 'r-other'));
      await auditA.record(entry('s1', 'r3'));
      await auditB.record(entry('s1', 'r4'));
      const ids = (entries: Array<{ requestId: string }>) => entries.map((item) => item.requestId);

      expect(ids(await auditB.entries())).toEqual(['r1', 'r2', 'r3', 'r4']);
      expect(ids(await auditA.entries({ sessionId: 's1' }))).toEqual(['r1', 'r3', 'r4']);
      expect(ids(await auditA.entries({ limit: 2 }))).toEqual(['r3', 'r4']);
      expect(ids(await auditA.entries({ sessionId: 's1', limit: 2 }))).toEqual(['r3', 'r4']);
      expect(ids(await auditA.entries({ limit: 0 }))).toEqual([]);
      expect(ids(await auditA.entries({ sessionId: 'none' }))).toEqual([]);
      expect(ids(await elsewhere.entries())).toEqual(['r-other']);
      await expect(auditA.entries({ limit: -1 })).rejects.toBeInstanceOf(RangeError);
      await expect(auditA.entries({ limit: 1.5 })).rejects.toBeInstanceOf(RangeError);
      expect(() => new PgAuditLog({ pool: a.pool, instanceId: '', workspace })).toThrow(RangeError);
    });

    it('turns database failures into an AuditLogError that says PostgreSQL could not be reached', async () => {
      const url = await freshDatabase();
      await twoInstances(url);
      const pool = new pg.Pool({ connectionString: url });
      const audit = new PgAuditLog({ pool, instanceId: 'a', workspace });
      await audit.record(entry('s1', 'r1'));
      await pool.end();
      for (const call of [() => audit.record(entry('s1', 'r2')), () => audit.entries()]) {
        const error = await call().then(() => new Error('did not fail'), (caught: unknown) => caught);
        expect(error).toBeInstanceOf(AuditLogError);
        expect(error).toMatchObject({ code: 'audit_write_failed', file: audit.location });
        expect((error as Error).message).toMatch(/PostgreSQL could not be reached.*then retry/);
      }
    });

    it('a Gate whose audit row cannot be written gives no decision', async () => {
      const url = await freshDatabase();
      const { a } = await twoInstances(url);
      const folder = await tempFolder();
      const pool = new pg.Pool({ connectionString: url });
      await pool.end();
      const gate = new Gate({
        handler: new ScriptedHandler(['allow_once']),
        grants: new PgGrantStore({ pool: a.pool, workspace, workDir: folder }),
        audit: new PgAuditLog({ pool, instanceId: 'a', workspace }),
      });
      await expect(gate.check(writeRequest(folder), { signal: never() })).rejects.toBeInstanceOf(AuditLogError);
    });
  });
});
