// The CI-sized soak (LIFE-3): two claw-server instances on one PostgreSQL under load while
// instances are killed (-9) and frozen past their lease and clients' connections are dropped;
// afterwards every session is checked (gapless, unduplicated, paired events, no tool run twice,
// every task ended, every session readable). It runs the benchmark's own program, built apps and
// all, the way `bench/soak/README.md` shows; the ten-minute run is the benchmark's.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresAvailable } from '@claw/session-store-pg/testing';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` in the repository's root and collects its output. */
function node(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface SoakResult {
  ok: boolean;
  seed: number;
  results: Array<{
    store: string;
    violations: Array<{ check: string; session?: string; detail: string }>;
    counts: { sessions: number; events: number; tasks: number; completed: number; toolCalls: number; bashRan: number };
    chaos: { counts: { kills: number; freezes: number; drops: number } };
  }>;
}

describe('the soak checks themselves', () => {
  it('pass a clean session and catch every defect seeded into one', async () => {
    const run = await node(['bench/soak/self-check.mjs']);
    type Case = { name: string; caught: boolean; expected: string[] };
    const result = JSON.parse(run.stdout) as { ok: boolean; cases: Case[] };
    expect(result.cases.filter((each) => each.expected.length > 0).length).toBeGreaterThan(5);
    expect(result.cases.filter((each) => !each.caught).map((each) => each.name)).toEqual([]);
    expect(result.ok).toBe(true);
    expect(run.code).toBe(0);
  }, 60_000);
});

describe.skipIf(!postgresAvailable())('the CI-sized soak on PostgreSQL (LIFE-3)', () => {
  it('two instances under kill -9, SIGSTOP past the lease and dropped connections: no violation', async () => {
    const run = await node([
      'bench/soak/main.mjs', '--store', 'pg', '--duration', '40s', '--instances', '2',
      '--clients', '10', '--observers', '4', '--pg-restarts', '0', '--drain', '30s', '--json',
    ]);
    const result = JSON.parse(run.stdout) as SoakResult;
    const [postgres] = result.results;
    // Seed and violations in the failure message: `--seed` repeats the chaos's choices.
    expect({ seed: result.seed, violations: postgres?.violations }).toEqual({ seed: result.seed, violations: [] });
    expect(postgres?.store).toBe('postgres');
    // It did real work under real chaos.
    expect(postgres?.counts.sessions).toBe(10);
    expect(postgres?.counts.completed).toBeGreaterThan(20);
    expect(postgres?.counts.bashRan).toBeGreaterThan(20);
    expect(postgres?.chaos.counts.kills).toBeGreaterThan(0);
    expect(postgres?.chaos.counts.freezes).toBeGreaterThan(0);
    expect(result.ok).toBe(true);
    expect(run.code).toBe(0);
  }, 240_000);
});
