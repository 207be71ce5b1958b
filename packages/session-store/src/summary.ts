import { sessionTitle } from '@claw/core';
import type { SessionSummary, StoredLog } from './session-log.js';
import { applyChange, stateOf, type SessionState } from './session-state.js';

/** The summary of a session in this state. */
export function summaryOfState(state: SessionState): SessionSummary {
  const title = sessionTitle(state.messages);
  return {
    id: state.id,
    workDir: state.workDir,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    messageCount: state.messages.length,
    usage: { ...state.usage },
    cost: { ...state.cost },
    lastEventSeq: state.eventSeq,
    ...(title === undefined ? {} : { title }),
  };
}

/**
 * The summary of a stored session, its records applied.
 *
 * @throws ChangeMismatch when a record does not fit (a corrupt log).
 */
export function summaryOf(log: Pick<StoredLog, 'snapshot' | 'records'>): SessionSummary {
  const state = stateOf(log.snapshot, log.snapshot.workDir);
  for (const record of log.records) applyChange(state, record.change, record.at);
  return summaryOfState(state);
}
