import { memo, useLayoutEffect, useRef } from 'react';
import type { SessionView, TranscriptItem } from '../state/types.js';
import { ApprovalCard } from './ApprovalCard.js';
import { CompactionDivider } from './CompactionDivider.js';
import { ElicitationCard } from './ElicitationCard.js';
import { ThinkingBlock } from './ThinkingBlock.js';
import { ToolCallView } from './ToolCallView.js';

/** How close to the bottom (px) still counts as "reading the latest": the view then follows. */
const followSlackPx = 48;

const Item = memo(function Item({
  item,
  sessionId,
  canAnswer,
}: {
  item: TranscriptItem;
  sessionId: string;
  canAnswer: boolean;
}) {
  switch (item.kind) {
    case 'user':
      return (
        <div data-testid="user-message" className={`bubble user${item.status === 'failed' ? ' failed' : ''}`}>
          <p className="who">
            you
            {item.status === 'pending' ? ' · sending' : ''}
          </p>
          <p className="text">{item.text}</p>
          {item.status === 'failed' ? (
            <p className="error-mark">
              not sent:
              {item.error}
            </p>
          ) : null}
        </div>
      );
    case 'assistant':
      return (
        <div data-testid="assistant-message" className="bubble assistant" aria-busy={item.streaming}>
          <p className="who">
            assistant
            {item.streaming ? ' · writing' : ''}
          </p>
          <p className="text">{item.text}</p>
        </div>
      );
    case 'thinking':
      return <ThinkingBlock item={item} />;
    case 'tool':
      return <ToolCallView call={item} />;
    case 'approval':
      return <ApprovalCard card={item} sessionId={sessionId} canAnswer={canAnswer} />;
    case 'elicitation':
      return <ElicitationCard card={item} sessionId={sessionId} canAnswer={canAnswer} />;
    case 'notice':
      return (
        <p data-testid="notice" className={`notice-line ${item.tone}`}>
          {item.text}
        </p>
      );
    case 'compaction':
      return <CompactionDivider item={item} />;
  }
});

/**
 * The transcript: a log (an ARIA live region, so screen readers hear new turns) that follows new
 * output while the reader is at the bottom and stays put when they scrolled up.
 */
export function Conversation({ view, canAnswer }: { view: SessionView; canAnswer: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const element = box.current;
    if (element !== null && following.current) element.scrollTop = element.scrollHeight;
  }, [view.items]);
  const onScroll = () => {
    const element = box.current;
    if (element === null) return;
    const below = element.scrollHeight - element.scrollTop - element.clientHeight;
    following.current = below < followSlackPx;
  };
  return (
    <div
      ref={box}
      className="conversation"
      role="log"
      aria-live="polite"
      aria-relevant="additions text"
      aria-label={`Conversation of ${view.id}`}
      tabIndex={0}
      onScroll={onScroll}
    >
      {view.items.length === 0 ? (
        <p className="muted empty">
          {view.status === 'open' ? 'Nothing yet: send a message below.' : 'Loading…'}
        </p>
      ) : null}
      {view.items.map((item) => (
        <Item key={item.key} item={item} sessionId={view.id} canAnswer={canAnswer} />
      ))}
    </div>
  );
}
