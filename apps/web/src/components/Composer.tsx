import { useId, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useController } from './controller-context.js';

// The command is named in the placeholder: the hint below keeps to one line in a narrow window
// (a hint that wrapped would move the box when a task's state replaces it).
const placeholder = 'Ask claw to do something… (/compact [what to keep] compacts the conversation)';

/**
 * The message box pinned at the bottom: Enter sends, Shift+Enter starts a new line; `/compact
 * [what to keep]` compacts the conversation instead of asking the model.
 */
export function Composer({
  sessionId,
  disabledReason,
}: {
  sessionId: string;
  disabledReason: string | undefined;
}) {
  const controller = useController();
  const [text, setText] = useState('');
  const hintId = useId();
  const send = () => {
    if (disabledReason !== undefined) return;
    if (controller.submit(sessionId, text)) setText('');
  };
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };
  return (
    <form className="composer" onSubmit={onSubmit}>
      <textarea
        aria-label="Message"
        aria-describedby={hintId}
        rows={2}
        placeholder={placeholder}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <button type="submit" className="primary" disabled={disabledReason !== undefined || text.trim() === ''}>
        Send
      </button>
      <p id={hintId} className="composer-hint muted">
        {disabledReason ?? 'Enter sends · Shift+Enter new line · Esc interrupts'}
      </p>
    </form>
  );
}
