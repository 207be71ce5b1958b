import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { postgresAvailable, startCluster, type TestCluster } from '@claw/session-store-pg/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WsClient, cleanUp as cleanUpClients } from './helpers.js';
import { ServerProcess, killServers, serverEnv } from './process.js';

const folders: string[] = [];

async function folder(): Promise<string> {
  const made = await mkdtemp(path.join(tmpdir(), 'claw-server-pg-'));
  folders.push(made);
  return made;
}

async function startServer(workDir: string, env: Record<string, string>, args: string[] = []) {
  const cwd = await folder();
  const portFile = path.join(cwd, 'ports.json');
  const server = new ServerProcess(
    ['--demo', '--workdir', workDir, '--tcp-port', '0', '--http-port', '0', '--port-file', portFile, ...args],
    { env: serverEnv(env), cwd },
  );
  return { server, ports: await server.ports(portFile) };
}

describe.skipIf(!postgresAvailable())('claw-server --store postgres:// (SCALE-6)', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster.destroy();
  });
  afterEach(async () => {
    await cleanUpClients();
    await killServers();
    for (const made of folders.splice(0)) await rm(made, { recursive: true, force: true });
  });

  it('stores sessions in PostgreSQL, where a second instance on a shared workspace finds them', async () => {
    const url = await cluster.createDatabase();
    const workDir = await folder();
    const a = await startServer(workDir, {}, ['--store', url]);
    expect(a.server.stderr).toMatch(/store: sessions in PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1/);
    const client = await WsClient.connect(a.ports.http);
    await client.hello(a.server.token());
    client.send({ type: 'open', session_id: 'shared-1' });
    await client.next('session_opened');
    client.send({ type: 'prompt', content: 'show me' });
    const asked: string[] = [];
    await client.waitFor(() => {
      for (const request of client.of('approval_request')) {
        if (asked.includes(request.request_id)) continue;
        asked.push(request.request_id);
        client.send({ type: 'approval_response', request_id: request.request_id, decision: 'deny' });
      }
      return client.of('task_completed')[0];
    }, 'the demo task to complete', 15_000);

    // Nothing under the workspace: the session is in the database, with its lease.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const rows = await db.query<{ id: string; stored: boolean; owner_instance: string | null }>(
        'SELECT id, stored, owner_instance FROM claw_sessions',
      );
      expect(rows.rows.map((row) => [row.id, row.stored])).toEqual([['shared-1', true]]);
      expect(rows.rows[0]?.owner_instance).toMatch(/^[0-9a-f-]{36}$/);
      const changes = await db.query<{ count: string }>('SELECT count(*) AS count FROM claw_changes');
      expect(Number(changes.rows[0]?.count)).toBeGreaterThan(0);

      // A second instance (CLAW_STORE_URL this time) lists the session in its welcome.
      const b = await startServer(workDir, { CLAW_STORE_URL: url });
      const other = await WsClient.connect(b.ports.http);
      const welcome = await other.hello(b.server.token());
      expect(JSON.stringify(welcome)).toContain('shared-1');

      // A stops: it gives the lease up, and B opens the session where A left it.
      a.server.signal('SIGTERM');
      expect(await a.server.exited).toBe(0);
      const released = await db.query('SELECT owner FROM claw_sessions WHERE id = $1', ['shared-1']);
      expect(released.rows).toEqual([{ owner: null }]);
      const from = other.events.length;
      other.send({ type: 'open', session_id: 'shared-1' });
      const opened = await other.next('session_opened', () => true, from);
      // Its events continue where A's ended (RT-3 across instances).
      const lastOnA = Math.max(...client.events.map((event) => Number((event as { seq?: number }).seq ?? 0)));
      expect(lastOnA).toBeGreaterThan(0);
      expect(opened.last_seq).toBe(lastOnA);
    } finally {
      await db.end();
    }
  });

  it('refuses a store that is not a PostgreSQL URL, or one it cannot reach, with exit 2', async () => {
    const bad = await ServerProcess.run(['--demo', '--store', 'mysql://x/y']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--store takes a PostgreSQL URL/);
    const fromEnv = await ServerProcess.run(['--demo'], { env: serverEnv({ CLAW_STORE_URL: 'redis://x' }) });
    expect(fromEnv.status).toBe(2);
    expect(fromEnv.stderr).toMatch(/CLAW_STORE_URL takes a PostgreSQL URL/);
    const unreachable = await ServerProcess.run(
      ['--demo', '--store', 'postgres://claw:secret@127.0.0.1:1/claw'],
    );
    expect(unreachable.status).toBe(2);
    expect(unreachable.stderr).toMatch(/cannot use the session store postgres:\/\/claw:\*\*\*@127\.0\.0\.1:1\/claw/);
    expect(unreachable.stderr).not.toContain('secret');
  });
});
