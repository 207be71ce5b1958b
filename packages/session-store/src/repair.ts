import { findUnpairedCalls, type Message, type ToolCall, type ToolMessage } from '@claw/core';

/** Observation text for an interrupted call when no tool journal tells more (SES-7). */
export const toolCallIncompleteText = 'tool call incomplete (previous run was interrupted)';

/** Observation text for an interrupted call whose start was never recorded (SES-8). */
export const toolCallNeverStartedText =
  'tool call never started (the previous run was interrupted before it ran)';

/** Observation text for an interrupted call that started and never reported its end (SES-8). */
export const toolCallStartedText =
  'tool call started, outcome unknown (the process stopped while it ran; check before repeating it)';

/**
 * Observation text for an interrupted call that ended, but whose result was lost before it was
 * saved (the process stopped after the tool's end was recorded and before its result was) (SES-8).
 * A result that was saved is put back instead (see {@link RepairedCallState}).
 */
export const toolCallUnrecordedText =
  'tool call finished, but its result was not saved (the process stopped before it was recorded; check before repeating it)';

/**
 * What is known about a tool call left without an Observation:
 * - `incomplete`: nothing (the session has no tool journal, e.g. an older session);
 * - `never_started`: the journal has no start for it, so the tool did not run;
 * - `started`: it started and never reported its end; its effects are unknown;
 * - `finished_unrecorded`: it ended, but its result was lost.
 */
export type InterruptedCallState = 'incomplete' | 'never_started' | 'started' | 'finished_unrecorded';

/**
 * What repair did for a call without an Observation: told the model it was interrupted (an
 * {@link InterruptedCallState}), or, `recovered`, put back the result the session stored for it
 * (its `tool_result` event) when its wave's Observations were not saved. A recovered call ended
 * as the model sees it: it is not told again, and it must never run again.
 */
export type RepairedCallState = InterruptedCallState | 'recovered';

/**
 * The tool journal as repair reads it: which calls were recorded as started and as finished, and
 * the results stored for calls that have no Observation.
 */
export interface ToolJournalView {
  readonly started: ReadonlySet<string>;
  readonly finished: ReadonlySet<string>;
  /**
   * The Observations of calls whose result was stored (as their `tool_result` event) but whose
   * wave never appended it, by call id. Repair puts these back instead of making one up.
   */
  readonly results?: ReadonlyMap<string, ToolMessage>;
  /**
   * False when the session never recorded a tool start: then `started` and `finished` tell
   * nothing, and a call without a stored result is `incomplete`. Default true.
   */
  readonly active?: boolean;
}

/** One call that got an Observation from repair. */
export interface RepairedCall {
  readonly call: ToolCall;
  readonly state: RepairedCallState;
  /**
   * The inserted Observation: the stored one when `recovered`, else an error Observation with
   * the text for `state`.
   */
  readonly observation: ToolMessage;
  /** Where the Observation sits in the repaired history. */
  readonly index: number;
}

/** The outcome of {@link repairHistory}. */
export interface HistoryRepair {
  /** The repaired history: the very array passed in when no call was missing its Observation. */
  readonly history: readonly Message[];
  /** The calls that got an Observation, oldest first and in call order within a message. */
  readonly repaired: readonly RepairedCall[];
}

const texts: Readonly<Record<InterruptedCallState, string>> = {
  incomplete: toolCallIncompleteText,
  never_started: toolCallNeverStartedText,
  started: toolCallStartedText,
  finished_unrecorded: toolCallUnrecordedText,
};

const labels: Readonly<Record<RepairedCallState, string>> = {
  incomplete: 'incomplete (previous run was interrupted)',
  never_started: 'never started',
  started: 'started, outcome unknown',
  finished_unrecorded: 'finished, result not saved',
  recovered: 'ended, its saved result restored',
};

/** The Observation repair inserts for a call in this state. */
export function interruptedObservation(
  toolCallId: string,
  state: InterruptedCallState,
): ToolMessage {
  return { role: 'tool', toolCallId, content: texts[state], isError: true };
}

function stateOf(id: string, journal: ToolJournalView | undefined): InterruptedCallState {
  if (journal === undefined || journal.active === false) return 'incomplete';
  // A finish without a start means the start could not be recorded, and then the tool never ran.
  if (!journal.started.has(id)) return 'never_started';
  return journal.finished.has(id) ? 'finished_unrecorded' : 'started';
}

/** What a call without an Observation gets, at `index`: its stored result, or a text. */
function repairOf(
  call: ToolCall,
  journal: ToolJournalView | undefined,
  index: number,
): RepairedCall {
  const stored = journal?.results?.get(call.id);
  if (stored !== undefined) return { call, state: 'recovered', observation: stored, index };
  const state = stateOf(call.id, journal);
  return { call, state, observation: interruptedObservation(call.id, state), index };
}

/**
 * Orphan repair (SES-7, SES-8): every assistant tool call without an Observation gets one,
 * inserted directly after that assistant message and its existing Observations (before the next
 * non-tool message), in call order. A call whose result the journal holds gets that result
 * (`recovered`): a call never has two. Any other gets a text saying what the journal knows (see
 * {@link InterruptedCallState}); without a journal every such call is `incomplete`. Tools are never
 * re-executed. Pure: `history` is not changed; when nothing is missing, it is returned as is.
 */
export function repairHistory(
  history: readonly Message[],
  journal?: ToolJournalView,
): HistoryRepair {
  const gaps = findUnpairedCalls(history);
  if (gaps.length === 0) return { history, repaired: [] };
  const repaired: RepairedCall[] = [];
  const result: Message[] = [];
  let from = 0;
  for (const gap of gaps) {
    for (let at = from; at < gap.before; at += 1) result.push(history[at] as Message);
    from = gap.before;
    for (const call of gap.calls) {
      const repair = repairOf(call, journal, result.length);
      repaired.push(repair);
      result.push(repair.observation);
    }
  }
  for (let at = from; at < history.length; at += 1) result.push(history[at] as Message);
  return { history: result, repaired };
}

/**
 * One line per repaired call, for a person to read: `bash call_1: started, outcome unknown`.
 */
export function describeRepair(repaired: readonly RepairedCall[]): string[] {
  return repaired.map(({ call, state }) => `${call.name} ${call.id}: ${labels[state]}`);
}
