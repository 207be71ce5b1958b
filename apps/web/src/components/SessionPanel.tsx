import { memo, type KeyboardEvent } from 'react';
import {
  canInterrupt,
  instructionsText,
  linkText,
  sessionTitleText,
  taskStateText,
} from '../state/selectors.js';
import type { ConnectionStatus, SessionView } from '../state/types.js';
import { Composer } from './Composer.js';
import { Conversation } from './Conversation.js';
import { useController } from './controller-context.js';
import { Figures } from './Figures.js';
import { ModelWait } from './ModelWait.js';

/**
 * One open session: its header (link, task state, interrupt, close), the conversation, the figures
 * and the composer pinned at the bottom. Updated only when its own view changes (WEB-1).
 */
export const SessionPanel = memo(function SessionPanel({
  view,
  connection,
}: {
  view: SessionView;
  connection: ConnectionStatus;
}) {
  const controller = useController();
  const connected = connection === 'connected';
  const link = linkText(connection, view);
  const taskState = taskStateText(view);
  const interruptible = canInterrupt(connection, view);
  const title = sessionTitleText(view);
  const instructions = instructionsText(view.instructions);
  const onKeyDown = (event: KeyboardEvent) => {
    // Esc anywhere in the panel interrupts its task (WEB-4).
    if (event.key === 'Escape' && interruptible) {
      event.preventDefault();
      controller.interrupt(view.id);
    }
  };
  return (
    <section className="panel" aria-label={`Session ${view.id}`} onKeyDown={onKeyDown}>
      <header className="panel-head">
        <h2 className="panel-title" title={view.workdir}>{view.id}</h2>
        <span className={`link link-${link}`} data-testid="session-link">{link}</span>
        <span className={`state state-${taskState.replace(' ', '-')}`} data-testid="task-state" aria-live="polite">
          {taskState}
        </span>
        {view.role === 'observer' ? <span className="role muted">observer</span> : null}
        <span className="spacer" />
        <button
          type="button"
          className="small danger"
          disabled={!interruptible}
          aria-label="Interrupt"
          title="Interrupt the running task (Esc)"
          onClick={() => controller.interrupt(view.id)}
        >
          Interrupt
        </button>
        <button
          type="button"
          className="small"
          aria-label={`Close panel ${view.id}`}
          title="Close this panel (the session stays on the server)"
          onClick={() => controller.closeSession(view.id)}
        >
          Close
        </button>
        {title === undefined ? null : (
          <p className="panel-subtitle" data-testid="session-title" title={title}>{title}</p>
        )}
        {instructions === undefined ? null : (
          <p className="panel-instructions" data-testid="instructions" title={instructions}>
            {instructions}
          </p>
        )}
      </header>
      <Figures figures={view.figures} />
      {view.error !== undefined ? <p className="panel-error" role="alert">{view.error}</p> : null}
      <Conversation view={view} canAnswer={connected && view.status === 'open' && view.role !== 'observer'} />
      <ModelWait since={view.waitingSince} />
      <Composer
        sessionId={view.id}
        disabledReason={composerBlock(view, connected)}
      />
    </section>
  );
});

/** Why the composer cannot send now, or undefined when it can. */
function composerBlock(view: SessionView, connected: boolean): string | undefined {
  if (!connected) return 'Not connected: the page reconnects by itself.';
  if (view.status !== 'open') return 'Opening the session…';
  if (view.role === 'observer') return 'Observer: another client controls this session.';
  if (view.runState !== 'idle') return 'A task is running: wait for it, or interrupt it (Esc).';
  return undefined;
}
