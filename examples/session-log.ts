// Sessions stored where you want them: a `SessionLog` of your own (a Map stands in for a key-value
// store here). `SessionStore` builds sessions on it: repair, the tool journal, events.
// Run: node dist/session-log.js [workspace folder]
import { RuntimeFactory, resolveSettings } from '@claw/runtime';
import {
  SessionLockedError, SessionLogError, SessionStore, checkAppendSeqs, summaryOf,
  type LogRecord, type SessionLog, type SessionSnapshot,
} from '@claw/session-store';

type Stored = { snapshot: SessionSnapshot; records: LogRecord[] };

/** One value per session: its latest snapshot and the records after it. */
function keyValueLog(kv: Map<string, string>): SessionLog {
  const locks = new Set<string>();
  const location = (id: string) => `sessions/${id}`;
  const read = (id: string) => JSON.parse(kv.get(location(id)) ?? 'null') as Stored | null;
  const write = (id: string, stored: Stored) => void kv.set(location(id), JSON.stringify(stored));
  return {
    location,
    async acquire(id) {
      if (locks.has(id)) throw new SessionLockedError(`${id} is open elsewhere`, { sessionId: id });
      locks.add(id);
      const holder = { pid: process.pid, host: 'kv', startedAt: new Date().toISOString() };
      return { holder, release: async () => void locks.delete(id) };
    },
    load: async (id) => {
      const stored = read(id);
      return stored === null ? undefined : { ...stored, needsCompaction: false };
    },
    async append(id, records) {
      const stored = read(id);
      if (stored === null) throw new SessionLogError(`${id}: no snapshot`, { code: 'session_missing', location: location(id) });
      checkAppendSeqs(records, stored.records.at(-1)?.seq ?? stored.snapshot.seq, location(id));
      write(id, { ...stored, records: [...stored.records, ...records] });
      return { compactionDue: stored.records.length >= 100 }; // then a snapshot replaces them
    },
    compact: async (id, snapshot) => write(id, { snapshot, records: [] }),
    remove: async (id) => void kv.delete(location(id)),
    list: async () => ({
      sessions: [...kv.values()].map((text) => summaryOf(JSON.parse(text) as Stored)),
    }),
  };
}

const workDir = process.argv[2] ?? process.cwd();
const kv = new Map<string, string>();
const store = new SessionStore({ log: keyValueLog(kv) });
const factory = new RuntimeFactory({
  settings: await resolveSettings({ workDir, env: process.env }),
  env: process.env,
  sessions: { open: (id, options) => store.open(id, options), list: () => store.list() },
});
const runtime = await factory.createRuntime({ workDir, sessionId: 'kv-example' });
const result = await runtime.start('Read README.md and say in one line what it is about.').wait();
console.log(`${result.status}: ${result.finalText}`);
await runtime.close();
await factory.close();
for (const [key, value] of kv) console.log(`stored ${key}: ${value.length} bytes`);
