// A throwaway PostgreSQL cluster for tests, this package's and the server's (SCALE-6):
// Debian's binaries, `initdb` as the `postgres` user when the tests run as root (the server
// refuses root), a temporary folder, 127.0.0.1 and a free port only. Stopped by the pid it
// started and removed afterwards.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

/** Where the PostgreSQL server binaries are, or `undefined` when PostgreSQL is not installed. */
export function postgresBinDir(): string | undefined {
  const fromEnv = process.env.CLAW_POSTGRES_BIN;
  if (fromEnv !== undefined && existsSync(path.join(fromEnv, 'initdb'))) return fromEnv;
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const configured = config.status === 0 ? config.stdout.trim() : '';
  if (configured !== '' && existsSync(path.join(configured, 'initdb'))) return configured;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (existsSync(path.join(bin, 'initdb')) && existsSync(path.join(bin, 'postgres'))) return bin;
  }
  return undefined;
}

/**
 * Whether the PostgreSQL tests can run here. CI installs PostgreSQL and sets
 * CLAW_REQUIRE_POSTGRES, so a missing installation fails there instead of skipping.
 */
export function postgresAvailable(): boolean {
  if (postgresBinDir() !== undefined) return true;
  if (process.env.CLAW_REQUIRE_POSTGRES === '1') {
    throw new Error(
      'PostgreSQL is required for the session-store-pg tests but its server binaries (initdb, ' +
      'postgres) were not found: install it (apt-get install -y postgresql) or set ' +
      'CLAW_POSTGRES_BIN to the folder that holds them',
    );
  }
  return false;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port'));
        else resolve(address.port);
      });
    });
  });
}

interface Account {
  uid: number;
  gid: number;
}

/** The `postgres` account when running as root (PostgreSQL refuses root), else nobody. */
function serverAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) {
    throw new Error('The tests run as root, but there is no `postgres` user to run PostgreSQL as: install Debian\'s postgresql package');
  }
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

async function chownTree(folder: string, account: Account): Promise<void> {
  await chown(folder, account.uid, account.gid);
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const child = path.join(folder, entry.name);
    if (entry.isDirectory()) await chownTree(child, account);
    else await chown(child, account.uid, account.gid);
  }
}

function run(command: string, args: string[], account: Account | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(account === undefined ? {} : { uid: account.uid, gid: account.gid }),
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} exited with ${code}:\n${output}`));
    });
  });
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Flush to disk (`fsync=on`): only the durability test needs it. Default false. */
  fsync?: boolean;
}

/** A running throwaway cluster. */
export class TestCluster {
  readonly port: number;
  private child: ChildProcess | undefined;
  private databases = 0;

  constructor(
    private readonly bin: string,
    readonly folder: string,
    port: number,
    private readonly account: Account | undefined,
    private readonly fsync: boolean,
  ) {
    this.port = port;
  }

  get dataDir(): string {
    return path.join(this.folder, 'data');
  }

  /** The pid of the postmaster this helper started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A connection string for `database` (default `postgres`). */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server (again, after `stop`) and waits until it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      path.join(this.bin, 'postgres'),
      [
        '-D', this.dataDir,
        '-h', '127.0.0.1',
        '-p', String(this.port),
        '-k', this.folder,
        '-c', `fsync=${this.fsync ? 'on' : 'off'}`,
        '-c', `synchronous_commit=${this.fsync ? 'on' : 'off'}`,
        '-c', 'full_page_writes=off',
        '-c', 'max_connections=300',
        '-c', 'shared_buffers=32MB',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        ...(this.account === undefined ? {} : { uid: this.account.uid, gid: this.account.gid }),
        env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      },
    );
    this.child = child;
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log = (log + chunk.toString()).slice(-4000);
    });
    const exited = new Promise<never>((_, reject) => {
      child.once('exit', (code) => reject(new Error(`postgres exited (${code}) while starting:\n${log}`)));
    });
    const ready = (async () => {
      for (;;) {
        const client = new pg.Client({ connectionString: this.url() });
        client.on('error', () => {});
        try {
          await client.connect();
          await client.end();
          return;
        } catch {
          await client.end().catch(() => {});
          await delay(50);
        }
      }
    })();
    await Promise.race([ready, exited]);
  }

  /** Stops the server this helper started (fast shutdown), by its pid. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGINT');
    await exited;
  }

  /**
   * Stops the server like a crash (immediate shutdown, SIGQUIT to the pid it started: no
   * checkpoint, the next start runs crash recovery from the WAL).
   */
  async crash(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGQUIT');
    await exited;
  }

  /** A new, empty database on this cluster; its connection string. */
  async createDatabase(): Promise<string> {
    this.databases += 1;
    const name = `claw_test_${this.databases}`;
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  /** Stops the server and removes its folder. */
  async destroy(): Promise<void> {
    await this.stop();
    await rm(this.folder, { recursive: true, force: true });
  }
}

/** Creates (`initdb`) and starts a throwaway cluster. Call `destroy()` when done. */
export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error('PostgreSQL is not installed: apt-get install -y postgresql');
  const account = serverAccount();
  const folder = await mkdtemp(path.join(os.tmpdir(), 'claw-pg-'));
  try {
    if (account !== undefined) await chownTree(folder, account);
    await run(
      path.join(bin, 'initdb'),
      ['-D', path.join(folder, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
      account,
    );
    const cluster = new TestCluster(bin, folder, await freePort(), account, options.fsync ?? false);
    await cluster.start();
    return cluster;
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
