import { visible } from '@claw/channel/protocol';
import { memo, useLayoutEffect, useRef } from 'react';
import type { ApprovalItem, Decision } from '../state/types.js';
import { argumentEntries } from '../tool-format.js';
import { useController } from './controller-context.js';

const choices: Array<{ decision: Decision; label: string; className: string }> = [
  { decision: 'allow_once', label: 'Allow once', className: 'primary' },
  { decision: 'allow_session', label: 'Allow for this session', className: '' },
  { decision: 'deny', label: 'Deny', className: 'danger' },
];

function labelOf(decision: Decision): string {
  return choices.find((choice) => choice.decision === decision)?.label.toLowerCase() ?? decision;
}

function Arguments({ text }: { text: string }) {
  const entries = argumentEntries(text);
  if (entries === undefined) return <pre className="arguments">{visible(text)}</pre>;
  if (entries.length === 0) return <p className="muted">no arguments</p>;
  return (
    <dl className="arguments">
      {entries.map((entry) => (
        <div key={entry.name}>
          <dt>{entry.name}</dt>
          <dd>
            {entry.folded ? (
              <details>
                <summary>{entry.preview}</summary>
                <pre>{entry.text}</pre>
              </details>
            ) : (
              <pre>{entry.text}</pre>
            )}
          </dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * A tool call waiting for a person (WEB-3): what it is, why it asks, and the three answers. The
 * page only passes the answer on; the card changes when the server says how it was resolved
 * (`approval_resolved`), by this page or by another client.
 */
export const ApprovalCard = memo(function ApprovalCard({
  card,
  sessionId,
  canAnswer,
}: {
  card: ApprovalItem;
  sessionId: string;
  canAnswer: boolean;
}) {
  const controller = useController();
  const resolved = card.resolution;
  const box = useRef<HTMLDivElement>(null);
  const answeredHere = useRef(false);
  // The buttons go when the card resolves: the focus they had moves to the card, so keyboard
  // use goes on in this panel (Esc still interrupts it) instead of falling back to the page.
  useLayoutEffect(() => {
    const focusLost = document.activeElement === null || document.activeElement === document.body;
    if (resolved !== undefined && answeredHere.current && focusLost) box.current?.focus();
  }, [resolved]);
  return (
    <div
      ref={box}
      tabIndex={-1}
      role="group"
      aria-label={`Approval for ${card.toolName}`}
      data-testid="approval-card"
      className={`approval approval-${card.risk}${resolved ? ' resolved' : ''}`}
    >
      <p className="approval-head">
        <span className="approval-title">{resolved ? 'Approval' : 'Approval needed'}</span>
        <span className="tool-name">{card.toolName}</span>
        <span className={`risk risk-${card.risk}`}>{card.risk}</span>
      </p>
      <p className="reason">{visible(card.reason)}</p>
      <Arguments text={card.arguments} />
      {resolved ? (
        <p className={`decision decision-${resolved.decision}`} data-testid="approval-decision">
          Decided:
          {' '}
          <strong>{resolved.decision}</strong>
          {' '}
          by
          {' '}
          {resolved.by}
        </p>
      ) : (
        <>
          <div className="approval-actions">
            {choices.map((choice) => (
              <button
                key={choice.decision}
                type="button"
                className={choice.className}
                disabled={!canAnswer || card.answering !== undefined}
                onClick={() => {
                  answeredHere.current = true;
                  controller.answer(sessionId, card.requestId, choice.decision);
                }}
              >
                {choice.label}
              </button>
            ))}
          </div>
          {card.answering !== undefined ? (
            <p className="muted" role="status">
              Sent “
              {labelOf(card.answering)}
              ”; waiting for the server.
            </p>
          ) : null}
          {!canAnswer && card.answering === undefined ? (
            <p className="muted">Only a connected controller of this session can answer.</p>
          ) : null}
          {card.error !== undefined ? <p className="error-mark" role="alert">{card.error}</p> : null}
        </>
      )}
    </div>
  );
});
