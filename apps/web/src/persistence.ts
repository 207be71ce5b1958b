// What survives a reload (sessionStorage, this tab only): the open sessions with their last seq,
// and each one's view, so that the reopen asks only for the events after it (`open` + `after`).
import { emptySession } from './state/session.js';
import type { ConsoleState, SessionView, TranscriptItem } from './state/types.js';

const openKey = 'claw.console.open';
const viewPrefix = 'claw.console.view.';

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem' | 'key' | 'length'>;

interface OpenEntry {
  id: string;
  lastSeq: number;
}

/** The sessions to reopen after a reload, each with its view when one was kept. */
export function restoreSessions(storage: Store): SessionView[] {
  const entries = readJson(storage, openKey);
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry: unknown): SessionView[] => {
    if (!isOpenEntry(entry)) return [];
    const saved = readJson(storage, viewPrefix + entry.id);
    const view = isView(saved, entry.id) ? saved : undefined;
    if (view === undefined) {
      // No view kept: the reopen goes without a cursor and the history rebuilds it.
      return [{ ...emptySession(entry.id), status: 'opening', synced: false }];
    }
    return [{
      ...view,
      status: 'opening',
      resync: false,
      openPending: [],
      items: view.items.map(clearAnswer),
    }];
  });
}

/** Keeps the open sessions; writes only the views that changed since `written`. */
export function saveSessions(
  storage: Store,
  state: ConsoleState,
  written: Map<string, SessionView>,
): void {
  const open = state.panels.flatMap((id) => {
    const view = state.sessions[id];
    return view === undefined ? [] : [{ view, entry: { id, lastSeq: view.lastSeq } }];
  });
  trySet(storage, openKey, JSON.stringify(open.map(({ entry }) => entry)));
  for (const { view } of open) {
    if (written.get(view.id) === view) continue;
    // A view too big for the quota is dropped: that session then reopens from its history.
    if (!trySet(storage, viewPrefix + view.id, JSON.stringify(view))) {
      storage.removeItem(viewPrefix + view.id);
    }
    written.set(view.id, view);
  }
  const keep = new Set(open.map(({ view }) => viewPrefix + view.id));
  for (const key of storedViewKeys(storage)) {
    if (!keep.has(key)) storage.removeItem(key);
  }
  for (const id of written.keys()) {
    if (!keep.has(viewPrefix + id)) written.delete(id);
  }
}

function storedViewKeys(storage: Store): string[] {
  const keys: string[] = [];
  for (let index = 0; index < storage.length; index += 1) {
    const key = storage.key(index);
    if (key?.startsWith(viewPrefix)) keys.push(key);
  }
  return keys;
}

function trySet(storage: Store, key: string, value: string): boolean {
  try {
    storage.setItem(key, value);
    return true;
  } catch {
    return false;
  }
}

function readJson(storage: Store, key: string): unknown {
  const text = storage.getItem(key);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isOpenEntry(value: unknown): value is OpenEntry {
  const entry = value as Partial<OpenEntry> | null;
  return typeof entry?.id === 'string' && typeof entry.lastSeq === 'number';
}

/** A loose check: enough for the view to be used (it was written by this page). */
function isView(value: unknown, id: string): value is SessionView {
  const view = value as Partial<SessionView> | null;
  return (
    view?.id === id &&
    typeof view.lastSeq === 'number' &&
    Array.isArray(view.items) &&
    typeof view.listing === 'object' &&
    typeof view.figures === 'object'
  );
}

function clearAnswer(item: TranscriptItem): TranscriptItem {
  return (item.kind === 'approval' || item.kind === 'elicitation') && item.answering !== undefined
    ? { ...item, answering: undefined }
    : item;
}
