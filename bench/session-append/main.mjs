// Session append benchmark: the latency of one `append` on a claw file session (JSON-lines log
// with compaction) at 10 and at 10,000 messages of history, against a baseline that rewrites the
// whole session as one JSON file on every change (temporary file + rename, as the Go seed does),
// measured in the same run, interleaved, so both see the same machine. The ratios are what counts.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileSessionManager } from '@claw/session-store';

const sizes = [10, 10_000];
const appends = Number(process.env.BENCH_APPENDS ?? 300);
const baselineAppends = Number(process.env.BENCH_BASELINE_APPENDS ?? 40);
const journalCalls = Number(process.env.BENCH_JOURNAL_CALLS ?? 20);
const warmUp = 20;
const target = 2;

// A realistic mix: a prompt, a reply with a tool call, the tool's output (about 1 KB).
const output = 'src/module.ts:12: export function handler(request) { return respond(request); }\n'.repeat(12);
function message(index) {
  switch (index % 3) {
    case 0:
      return { role: 'user', content: `step ${index}: run the tests again and fix what fails in the parser` };
    case 1:
      return {
        role: 'assistant',
        content: 'Running the tests.',
        toolCalls: [{ id: `call_${index}`, name: 'bash', arguments: JSON.stringify({ command: 'npm test -- parser' }) }],
      };
    default:
      return { role: 'tool', toolCallId: `call_${index - 1}`, content: output };
  }
}

/** What the seed does: the whole session, pretty-printed, to a temporary file, renamed. */
class RewriteWholeFileSession {
  constructor(file) {
    this.file = file;
    this.state = {
      id: 'bench',
      workDir: path.dirname(file),
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      history: [],
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    };
  }

  async append(...messages) {
    this.state.history.push(...messages);
    this.state.updatedAt = new Date().toISOString();
    const temporary = `${this.file}.tmp`;
    await writeFile(temporary, JSON.stringify(this.state, null, 2));
    await rename(temporary, this.file);
  }
}

const root = await mkdtemp(path.join(os.tmpdir(), 'claw-bench-session-'));
const contenders = [];
try {
  for (const size of sizes) {
    const workDir = path.join(root, `claw-${size}`);
    const session = await new FileSessionManager({ workDir }).getOrCreate('bench', { workDir });
    for (let index = 0; index < size; index += 100) {
      const length = Math.min(100, size - index);
      const batch = Array.from({ length }, (_, offset) => message(index + offset));
      await session.append(...batch);
    }
    await session.flush();
    contenders.push({ name: 'claw', size, session, samples: [], limit: appends });

    const baseline = new RewriteWholeFileSession(path.join(root, `rewrite-${size}.json`));
    baseline.state.history = Array.from({ length: size }, (_, index) => message(index));
    await baseline.append();
    contenders.push({ name: 'rewrite', size, session: baseline, samples: [], limit: baselineAppends });
  }

  // Interleaved: each round appends one message to every contender that still needs samples.
  for (let round = 0; round < warmUp + appends; round += 1) {
    for (const contender of contenders) {
      if (round >= warmUp + contender.limit) continue;
      const next = message(contender.size + round);
      const started = performance.now();
      await contender.session.append(next);
      const elapsed = performance.now() - started;
      if (round >= warmUp) contender.samples.push(elapsed);
    }
    if (round % 50 === 0) process.stderr.write('.');
  }
  process.stderr.write('\n');

  // The tool journal's start record is flushed to the disk before the tool runs (SES-8).
  for (const contender of contenders.filter((entry) => entry.name === 'claw')) {
    contender.journal = [];
    for (let index = 0; index < journalCalls; index += 1) {
      const call = { id: `journal_${index}`, name: 'bash', arguments: '{"command":"true"}' };
      const started = performance.now();
      await contender.session.toolStarted(call);
      contender.journal.push(performance.now() - started);
      await contender.session.toolFinished(call.id);
    }
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const median = (values) => percentile(values, 50);
const find = (name, size) => contenders.find((entry) => entry.name === name && entry.size === size);
const [small, large] = sizes;

const format = (value) => `${value.toFixed(3)} ms`.padStart(13);
console.log(`session-append: one message appended to a history of ${small} and of ${large} messages`);
console.log(`claw: ${appends} measured appends per size; rewrite baseline: ${baselineAppends} (after ${warmUp} warm-up appends)\n`);
console.log(`${''.padEnd(38)}${'median'.padStart(13)}${'p95'.padStart(13)}`);
for (const contender of contenders) {
  const label = `${contender.name === 'claw' ? 'claw file session' : 'rewrite whole file'}, ${contender.size} msgs`;
  console.log(`${label.padEnd(38)}${format(median(contender.samples))}${format(percentile(contender.samples, 95))}`);
}
for (const size of sizes) {
  const journal = find('claw', size).journal;
  const label = `claw toolStarted (fsync), ${size} msgs`;
  console.log(`${label.padEnd(38)}${format(median(journal))}${format(percentile(journal, 95))}`);
}

const ratio = (top, bottom, p) => percentile(top.samples, p) / percentile(bottom.samples, p);
const times = (value) => `${value.toFixed(2)}x`.padStart(13);
console.log('');
console.log(`${'ratios'.padEnd(38)}${'median'.padStart(13)}${'p95'.padStart(13)}`);
for (const name of ['claw', 'rewrite']) {
  const label = `${name}, ${large} / ${small} msgs`;
  console.log(`${label.padEnd(38)}${times(ratio(find(name, large), find(name, small), 50))}${times(ratio(find(name, large), find(name, small), 95))}`);
}
for (const size of sizes) {
  const label = `rewrite / claw, ${size} msgs`;
  console.log(`${label.padEnd(38)}${times(ratio(find('rewrite', size), find('claw', size), 50))}${times(ratio(find('rewrite', size), find('claw', size), 95))}`);
}
const growth = ratio(find('claw', large), find('claw', small), 50);
const verdict = growth <= target ? 'meets' : 'MISSES';
console.log(`\nclaw median append at ${large} vs ${small} messages: ${growth.toFixed(2)}x ${verdict} the target of ≤ ${target}x`);
