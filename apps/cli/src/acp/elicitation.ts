import type {
  AgentContext,
  CreateElicitationResponse,
  ElicitationSchema as AcpElicitationSchema,
} from '@agentclientprotocol/sdk';
import type { ElicitationPrompt } from '@claw/approval';
import { errorMessage, type ElicitationAnswer } from '@claw/core';

export interface EditorInputOptions {
  /** The connection to the editor; `undefined` when none is open. */
  client: AgentContext | undefined;
  /** Whether the editor offered to fill in forms at `initialize` (`elicitation.form`). */
  forms: boolean;
  /** The ACP session the request is part of. */
  sessionId: string;
  /** Writes a note for people (stderr). */
  note: (text: string) => void;
}

/**
 * Puts an MCP server's request for input (MCP-7) to the editor as ACP `elicitation/create`
 * (form mode, scoped to the session), and gives back the editor's answer as claw's:
 * - an editor that did not offer forms at `initialize` (or no editor) is not asked: `decline`
 *   at once, and a note says why;
 * - `accept` is checked against the requested schema (defaults applied) with the same check
 *   claw makes of every answer; content that does not fit is not sent: `decline`, with a note
 *   (the editor's user cannot be asked again from here, and an unchecked answer must not reach
 *   the server);
 * - an action ACP may add later, or an editor whose request fails, is a `decline` with a note;
 * - when `signal` aborts (the prompt was cancelled, the time for an answer is up, another
 *   answer came first) the editor's request is cancelled (`$/cancel_request`), its late answer
 *   ignored, and this rejects with the abort.
 */
export async function askEditorForInput(
  prompt: ElicitationPrompt,
  signal: AbortSignal,
  options: EditorInputOptions,
): Promise<ElicitationAnswer> {
  const { client, forms, sessionId, note } = options;
  const declined = (why: string): ElicitationAnswer => {
    const server = JSON.stringify(prompt.server);
    note(`claw: declined the request for input of MCP server ${server}: ${why}`);
    return { action: 'decline' };
  };
  if (client === undefined) return declined('no editor is connected to ask');
  if (!forms) {
    return declined(
      'the editor cannot be asked to fill in a form (it did not offer elicitation.form at ' +
      'initialize)',
    );
  }
  let response: CreateElicitationResponse;
  try {
    response = await client.request(
      'elicitation/create',
      {
        mode: 'form',
        sessionId,
        // Who asks: the form comes from an MCP server, not from claw.
        message: `MCP server ${JSON.stringify(prompt.server)} asks: ${prompt.message}`,
        // As the server sent it; the MCP SDK checked it is a flat form schema.
        requestedSchema: prompt.requestedSchema as AcpElicitationSchema,
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
  } catch (error) {
    if (signal.aborted) throw error;
    return declined(`asking the editor failed (${errorMessage(error)})`);
  }
  switch (response.action) {
    case 'decline':
    case 'cancel':
      return { action: response.action };
    case 'accept':
      break;
    default:
      return declined(
        `the editor answered ${JSON.stringify(response.action)}, not accept, decline or cancel`,
      );
  }
  const content: unknown = (response as { content?: unknown }).content ?? {};
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    return declined('the editor\'s answer has no form content');
  }
  // Loaded when the editor answers a form, not at start-up (the MCP SDK's validator).
  const { validateElicitationContent } = await import('@claw/mcp');
  const checked = validateElicitationContent(
    prompt.requestedSchema as Parameters<typeof validateElicitationContent>[0],
    content as Record<string, unknown>,
  );
  if (!checked.valid) {
    return declined(`the editor's answer does not fit the form (${checked.error})`);
  }
  return { action: 'accept', content: checked.content };
}
