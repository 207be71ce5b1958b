import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SessionStore } from '@claw/session-store';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  PgSessionError,
  PgSessions,
  WorkspaceUnavailableError,
  workspaceIdOf,
  workspaceIdPath,
} from '../src/index.js';
import { postgresAvailable } from '../src/testing/index.js';
import { closeLogs, openLog, sharedCluster } from './fixtures.js';

const folders: string[] = [];

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-pg-workspace-'));
  folders.push(made);
  return made;
}

afterEach(async () => {
  for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
});

describe('workspaceIdOf (SCALE-5)', () => {
  it('makes the id once, and instances making it at once agree on it', async () => {
    const workDir = await folder();
    const ids = await Promise.all(Array.from({ length: 64 }, () => workspaceIdOf(workDir)));
    expect(new Set(ids).size).toBe(1);
    const stored = JSON.parse(await readFile(path.join(workDir, workspaceIdPath), 'utf8')) as { id: string };
    expect(stored.id).toBe(ids[0]);
    expect(await workspaceIdOf(workDir)).toBe(ids[0]);
  });

  it('refuses a damaged id file, saying which file and what to do', async () => {
    const workDir = await folder();
    await mkdir(path.join(workDir, '.claw'));
    for (const text of ['not json', '{"id": ""}', '{"id": 7}', '{}']) {
      await writeFile(path.join(workDir, workspaceIdPath), text);
      const error = await workspaceIdOf(workDir).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PgSessionError);
      expect(error).toMatchObject({ code: 'workspace_unavailable' });
      expect((error as Error).message).toContain(path.join(workDir, workspaceIdPath));
      expect((error as Error).message).toMatch(/restore it .* or remove it/);
    }
  });
});

describe.skipIf(!postgresAvailable())('PgSessions: sessions bound to a logical workspace (SCALE-5)', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('lists and opens a session on an instance that mounts its workspace at another path', async () => {
    const url = await freshDatabase();
    const real = await folder();
    const elsewhere = path.join(await folder(), 'mounted-here');
    // The same folder under another path, as another machine's mount would be.
    await symlink(real, elsewhere);
    const a = new PgSessions({ log: await openLog(url) });
    const b = new PgSessions({ log: await openLog(url) });
    const lease = await a.open('shared-1', { workDir: real });
    await lease.session.append({ role: 'user', content: 'hello' });
    await lease.release();

    expect((await b.list(elsewhere)).map((summary) => summary.id)).toEqual(['shared-1']);
    expect((await a.list(real)).map((summary) => summary.id)).toEqual(['shared-1']);
    const reopened = await b.open('shared-1', { workDir: elsewhere });
    expect(reopened.session.history()).toEqual([{ role: 'user', content: 'hello' }]);
    // Run in the folder as this instance has it (SES-5).
    expect(reopened.session.workDir).toBe(elsewhere);
    await reopened.release();
    const row = await b.log.pool.query('SELECT workspace FROM claw_sessions WHERE id = $1', ['shared-1']);
    expect(row.rows[0]).toEqual({ workspace: await workspaceIdOf(real) });
  });

  it('refuses a session in a folder that is another workspace, or missing, with workspace_unavailable', async () => {
    const url = await freshDatabase();
    const first = await folder();
    const second = await folder();
    const sessions = new PgSessions({ log: await openLog(url) });
    const lease = await sessions.open('bound-1', { workDir: first });
    await lease.session.append({ role: 'user', content: 'in the first workspace' });
    await lease.release();

    const wrong = await sessions.open('bound-1', { workDir: second }).catch((caught: unknown) => caught);
    expect(wrong).toBeInstanceOf(WorkspaceUnavailableError);
    expect(wrong).toMatchObject({ code: 'workspace_unavailable', workspace: await workspaceIdOf(first) });
    expect((wrong as Error).message).toContain(`${second} on this claw instance is another workspace`);
    expect((await sessions.list(second)).map((summary) => summary.id)).toEqual([]);

    const missing = path.join(second, 'not-mounted');
    const absent = await sessions.open('bound-1', { workDir: missing }).catch((caught: unknown) => caught);
    expect(absent).toBeInstanceOf(WorkspaceUnavailableError);
    expect((absent as Error).message).toContain(`${missing}, which this claw instance cannot reach`);
    // Nothing was taken: the right folder still opens it.
    const again = await sessions.open('bound-1', { workDir: first });
    expect(again.session.history()).toHaveLength(1);
    await again.release();
  });

  it('lists the sessions of one workspace, reading only its rows, as when it read them all', async () => {
    const url = await freshDatabase();
    const first = await folder();
    const second = await folder();
    const log = await openLog(url);
    // What the log hands out while a workspace is listed.
    const handedOut: string[] = [];
    const listPage = log.list.bind(log);
    log.list = async (options) => {
      const page = await listPage(options);
      handedOut.push(...page.sessions.map((summary) => summary.id));
      return page;
    };
    const sessions = new PgSessions({ log });
    for (const [id, workDir] of [['a-1', first], ['b-1', second], ['a-2', first]] as const) {
      const lease = await sessions.open(id, { workDir });
      await lease.session.append({ role: 'user', content: id });
      await lease.release();
    }
    // Stored before workspace ids (not bound): they belong to the folder they worked in; one of
    // them also before summaries (read whole).
    const older = new SessionStore({ log: await openLog(url) });
    for (const [id, workDir] of [['old-a', first], ['old-b', second], ['old-a-whole', first]] as const) {
      const lease = await older.open(id, { workDir });
      await lease.session.append({ role: 'user', content: id });
      await lease.release();
    }
    await older.close();
    await log.pool.query('UPDATE claw_sessions SET summary = NULL WHERE id = $1', ['old-a-whole']);
    // Open here, nothing stored yet; and open with a change on top of what is stored.
    const fresh = await sessions.open('a-fresh', { workDir: first });
    const busy = await sessions.open('a-1', { workDir: first });
    await busy.session.append({ role: 'assistant', content: 'more' });

    const listedFirst = await sessions.list(first);
    expect(listedFirst.map((summary) => summary.id).sort()).toEqual(
      ['a-1', 'a-2', 'a-fresh', 'old-a', 'old-a-whole'],
    );
    expect(listedFirst.find((summary) => summary.id === 'a-1')?.messageCount).toBe(2);
    const times = listedFirst.map((summary) => Date.parse(summary.updatedAt));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    expect(handedOut).not.toContain('b-1');
    expect(handedOut).not.toContain('old-b');

    handedOut.length = 0;
    expect((await sessions.list(second)).map((summary) => summary.id).sort()).toEqual(['b-1', 'old-b']);
    expect(handedOut.filter((id) => id.startsWith('a') || id.startsWith('old-a'))).toEqual([]);
    await fresh.release();
    await busy.release();
    // Once let go, a session never stored is not listed.
    expect((await sessions.list(first)).map((summary) => summary.id).sort()).toEqual(
      ['a-1', 'a-2', 'old-a', 'old-a-whole'],
    );
  });

  it('binds a session in the claim itself: one bound to another workspace meanwhile is not claimed', async () => {
    const url = await freshDatabase();
    const first = await folder();
    const second = await folder();
    // A session of an older claw: stored, bound to no workspace.
    const older = new SessionStore({ log: await openLog(url) });
    const made = await older.open('raced', { workDir: second });
    await made.session.append({ role: 'user', content: 'hello' });
    await made.release();
    await older.close();
    const sessions = new PgSessions({ log: await openLog(url) });
    const before = await sessions.log.pool.query<{ epoch: string }>('SELECT epoch FROM claw_sessions WHERE id = $1', ['raced']);

    // Another instance holds the row while this one claims it, and binds it to the first workspace.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM claw_sessions WHERE id = $1 FOR UPDATE', ['raced']);
      const opening = sessions.open('raced', { workDir: second }).catch((caught: unknown) => caught);
      await vi.waitFor(async () => {
        const waiting = await other.query<{ count: string }>(
          `SELECT count(*) FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        expect(Number(waiting.rows[0]?.count)).toBe(1);
      }, { timeout: 5_000, interval: 10 });
      await other.query('UPDATE claw_sessions SET workspace = $2 WHERE id = $1', ['raced', await workspaceIdOf(first)]);
      await other.query('COMMIT');

      const refused = await opening;
      expect(refused).toBeInstanceOf(WorkspaceUnavailableError);
      expect(refused).toMatchObject({ workspace: await workspaceIdOf(first), workDir: second });
    } finally {
      await other.end();
    }
    const after = await sessions.log.pool.query('SELECT owner, epoch FROM claw_sessions WHERE id = $1', ['raced']);
    expect(after.rows).toEqual([{ owner: null, epoch: before.rows[0]?.epoch }]);
  });

  it('surfaces a failure to bind a session to its workspace, and claims nothing then', async () => {
    const url = await freshDatabase();
    const workDir = await folder();
    const log = await openLog(url);
    await log.pool.query(
      `CREATE FUNCTION claw_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'binding refused by the test'; END $$`,
    );
    await log.pool.query(
      `CREATE TRIGGER claw_test_refuse BEFORE INSERT OR UPDATE ON claw_sessions FOR EACH ROW
       WHEN (NEW.workspace IS NOT NULL) EXECUTE FUNCTION claw_test_refuse()`,
    );
    const sessions = new PgSessions({ log });
    await expect(sessions.open('unbound', { workDir })).rejects.toThrow('binding refused by the test');
    expect((await log.pool.query('SELECT id FROM claw_sessions')).rows).toEqual([]);
  });

  it('keeps grants and audit rows per workspace id, shared by the instances that mount it', async () => {
    const url = await freshDatabase();
    const real = await folder();
    const elsewhere = path.join(await folder(), 'mount');
    await symlink(real, elsewhere);
    const a = new PgSessions({ log: await openLog(url, { instanceId: 'instance-a' }) });
    const b = new PgSessions({ log: await openLog(url, { instanceId: 'instance-b' }) });
    const grantsA = await a.grantStore(real);
    const grantsB = await b.grantStore(elsewhere);
    expect(grantsA.workspace).toBe(grantsB.workspace);
    const audit = await b.auditLog(elsewhere);
    await audit.record({
      time: new Date().toISOString(), requestId: 'r1', sessionId: 's1', toolName: 'bash', digest: 'd', decision: 'deny',
    });
    const entries = await (await a.auditLog(real)).entries();
    expect(entries).toMatchObject([{ requestId: 'r1', instance: 'instance-b', workspace: grantsA.workspace }]);
  });
});

describe.skipIf(!postgresAvailable())('PgSessionLog.list: summaries kept in the session rows', () => {
  const { freshDatabase } = sharedCluster();
  afterEach(closeLogs);

  it('lists from the rows (no session is read), the same summaries as reading them would give', async () => {
    const url = await freshDatabase();
    const log = await openLog(url);
    const store = new SessionStore({ log });
    const lease = await store.open('summed', { workDir: '/work' });
    await lease.session.append({ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' });
    await lease.session.recordUsage({ promptTokens: 10, completionTokens: 5, totalTokens: 15 }, 0.5);
    const last = lease.session.appendEvent({ type: 'task_started', task_id: 't', content: 'one' });
    await last.written;
    await lease.release();
    await store.close();

    const read = await openLog(url);
    const stored = await read.load('summed');
    const expected = {
      id: 'summed',
      messageCount: 2,
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      cost: { usd: 0.5, unpricedCalls: 0 },
      lastEventSeq: last.event.seq,
      updatedAt: stored?.records.at(-1)?.at,
    };
    expect((await read.list()).sessions).toMatchObject([expected]);
    // With its records gone, the list still gives the summary: it was not read from them.
    await read.pool.query('DELETE FROM claw_changes WHERE session_id = $1', ['summed']);
    expect((await read.list()).sessions).toMatchObject([expected]);
    // A row without a summary (stored by an older claw) is read whole.
    await read.pool.query('UPDATE claw_sessions SET summary = NULL WHERE id = $1', ['summed']);
    expect((await read.list()).sessions).toMatchObject([{ id: 'summed', messageCount: 0, lastEventSeq: 0 }]);
  });

  it('leaves out a session whose records do not fit it, and names it, as the file store does, from its row or read whole', async () => {
    const url = await freshDatabase();
    const log = await openLog(url);
    const store = new SessionStore({ log });
    for (const id of ['healthy', 'gap', 'unfit']) {
      const lease = await store.open(id, { workDir: '/work' });
      await lease.session.append({ role: 'user', content: id });
      await lease.release();
    }
    await store.close();

    const other = await openLog(url);
    const lastSeq = async (id: string) => Number(
      (await other.pool.query<{ last_seq: string }>('SELECT last_seq FROM claw_sessions WHERE id = $1', [id])).rows[0]?.last_seq,
    );
    // An event that does not follow the session's last one (there is none), past the store.
    const at = new Date().toISOString();
    const event = { type: 'text_delta' as const, task_id: 't', content: 'x', session_id: 'gap', seq: 7, at };
    await other.append('gap', [{ seq: await lastSeq('gap') + 1, at, change: { type: 'event', event } }], { sync: true });
    // A row without a summary (an older claw's) whose last record inserts past its history's end.
    const unfitSeq = await lastSeq('unfit');
    const repair = { type: 'repair', inserts: [{ index: 9, message: { role: 'tool', toolCallId: 'c', content: 'x' } }] };
    const updated = await other.pool.query(
      'UPDATE claw_changes SET change = $1 WHERE session_id = $2 AND seq = $3',
      [JSON.stringify(repair), 'unfit', unfitSeq],
    );
    expect(updated.rowCount).toBe(1);
    await other.pool.query('UPDATE claw_sessions SET summary = NULL WHERE id = $1', ['unfit']);

    const page = await other.list();
    expect(page.sessions.map((summary) => summary.id)).toEqual(['healthy']);
    expect(page.unreadable?.map((session) => [session.id, session.location])).toEqual([
      ['gap', other.location('gap')],
      ['unfit', other.location('unfit')],
    ]);
    // Opening them says why, as the listing does.
    const reopened = new SessionStore({ log: other });
    for (const id of ['gap', 'unfit']) {
      const reason = page.unreadable?.find((session) => session.id === id)?.reason;
      expect(reason).toContain(`${other.location(id)} is corrupt`);
      await expect(reopened.open(id, { workDir: '/work' })).rejects.toMatchObject({ code: 'session_corrupt' });
    }
    await reopened.close();
  });
});
