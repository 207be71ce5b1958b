import { findUnpairedCalls, type AgentSession, type Message } from '@claw/core';
import { canceledObservation } from './observations.js';
import type { SafeReporter } from './safe-reporter.js';

/** Appends to the session, then reports each message, in order. */
export async function appendAndReport(
  session: AgentSession,
  reporter: SafeReporter,
  messages: readonly Message[],
): Promise<void> {
  await session.append(...messages);
  for (const message of messages) await reporter.message(message);
}

/**
 * EnsureToolObservations (ENG-5): if the run stopped after an assistant message with tool calls
 * was appended but before all its Observations were, append "tool call canceled" for the missing
 * ones, in call order. Which calls are missing is core's `findUnpairedCalls`, the definition the
 * session's repair (SES-7) uses too; only the trailing group is this run's to pair (an earlier
 * gap is the repair's). Reporting them is best effort: the run is already ending.
 */
export async function pairDanglingCalls(
  session: AgentSession,
  reporter: SafeReporter,
): Promise<void> {
  const history = session.history();
  const trailing = findUnpairedCalls(history).at(-1);
  if (trailing === undefined || trailing.before !== history.length) return;
  const missing = trailing.calls.map((call) => canceledObservation(call.id));
  await session.append(...missing);
  for (const message of missing) await reporter.message(message).catch(() => undefined);
}
