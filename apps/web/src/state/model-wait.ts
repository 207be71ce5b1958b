// When the session's model call went silent, for the line that says the page waits for it (pure).
import { describeModelWait, modelWaitNoticeMs, type SessionEvent } from '@claw/channel/protocol';

/**
 * When the current model call started waiting for its first content, after `event` arrived at
 * `receivedAt` (this page's clock: the server's may differ): a call starts it (`thinking`), a
 * retry starts it afresh once its wait is over, and any content (of the answer or of the model's
 * reasoning) or the task's end stops it.
 */
export function waitingSinceAfter(
  since: number | undefined,
  event: SessionEvent,
  receivedAt: number,
): number | undefined {
  switch (event.type) {
    case 'thinking':
      return receivedAt;
    case 'model_retry':
      return receivedAt + event.delay_ms;
    case 'context_compacted':
      // After a call the context overflowed, the call is made again once compacted; before a
      // call (the usual case) nothing waits yet.
      return since === undefined ? undefined : receivedAt;
    case 'text_delta':
    case 'thinking_delta':
    case 'text_completed':
    case 'tool_call':
    case 'usage':
    case 'task_completed':
    case 'task_canceled':
    case 'task_failed':
      return undefined;
    case 'task_started':
    case 'tool_result':
    case 'approval_request':
    case 'approval_resolved':
    case 'elicitation_request':
    case 'elicitation_resolved':
    case 'state':
      return since;
  }
}

/**
 * The line a silent model call gets once it has been silent for 5 s (as the terminal's):
 * `waiting for the model: 12 s so far`; undefined before, or when nothing is awaited.
 */
export function modelWaitText(since: number | undefined, now: number): string | undefined {
  if (since === undefined || now - since < modelWaitNoticeMs) return undefined;
  return describeModelWait(Math.floor((now - since) / 1000));
}
