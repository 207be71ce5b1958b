import { ApprovalNotPendingError } from '@claw/approval';
import type { RelayReply, RelayRequest } from '@claw/session-store';
import { SessionBusyError } from './errors.js';
import type { Runtime } from './runtime.js';
import { ElicitationAnswerError } from './session-approvals.js';

/**
 * Serves the requests other processes' clients send to a session this process owns (SCALE-4),
 * on `runtime`: a prompt starts a task (refused with `session_busy` while one runs: never two
 * turns at once), an interrupt cancels it, an answer settles an approval (the first answer wins,
 * wherever it came from: a later one gets `approval_not_pending`) or a request for input of an
 * MCP server (likewise, `elicitation_not_pending`; one that does not fit the form gets
 * `invalid_elicitation_answer`). `watched` hears that another process's clients follow the
 * session (so that it is not counted as unwatched).
 */
export function relayHandler(
  runtime: Runtime,
  options: { watched?: () => void } = {},
): (request: RelayRequest) => Promise<RelayReply> {
  return async (request) => {
    try {
      switch (request.kind) {
        case 'prompt':
          return { ok: true, taskId: runtime.start(request.content).id };
        case 'interrupt':
          if (runtime.activeTask === undefined) {
            return { ok: false, code: 'not_running', message: `session ${JSON.stringify(runtime.sessionId)} has no running task` };
          }
          runtime.cancel(new Error(request.reason));
          return { ok: true };
        case 'answer':
          runtime.respond(request.requestId, request.decision, request.by);
          return { ok: true };
        case 'elicitation_answer':
          runtime.respondElicitation(
            request.requestId,
            {
              action: request.action,
              ...(request.content === undefined ? {} : { content: request.content }),
            },
            request.by,
          );
          return { ok: true };
        case 'watching':
          options.watched?.();
          return { ok: true };
      }
    } catch (error) {
      if (
        error instanceof SessionBusyError ||
        error instanceof ApprovalNotPendingError ||
        error instanceof ElicitationAnswerError
      ) {
        return { ok: false, code: error.code, message: error.message };
      }
      throw error;
    }
  };
}
