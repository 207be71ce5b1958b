import { visible } from '@claw/channel/protocol';
import {
  memo,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type FormEvent,
  type KeyboardEvent,
} from 'react';
import {
  checkForm,
  fieldHint,
  formFields,
  initialValues,
  type FieldValue,
  type FormField,
  type FormValues,
} from '../elicitation-form.js';
import { elicitationOutcomeText } from '../state/selectors.js';
import type { ElicitationAction, ElicitationItem, ElicitationReply } from '../state/types.js';
import { useController } from './controller-context.js';

const inputTypes: Partial<Record<FormField['kind'], string>> = {
  text: 'text',
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
  number: 'number',
  integer: 'number',
};

const actionWords: Record<ElicitationAction, string> = {
  accept: 'the form',
  decline: 'decline',
  cancel: 'cancel',
};

function Field({
  field,
  id,
  value,
  error,
  disabled,
  onChange,
}: {
  field: FormField;
  id: string;
  value: FieldValue | undefined;
  error: string | undefined;
  disabled: boolean;
  onChange: (value: FieldValue) => void;
}) {
  const hint = [field.description, fieldHint(field)].filter(Boolean).join(' · ');
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint === '' ? '' : hintId, error === undefined ? '' : errorId]
    .filter(Boolean)
    .join(' ') || undefined;
  const common = {
    id,
    disabled,
    'aria-invalid': error !== undefined,
    'aria-describedby': describedBy,
    'aria-required': field.required,
  };
  const label = (
    <>
      {field.label}
      {field.required ? <span className="required" aria-hidden="true"> *</span> : null}
    </>
  );
  let control;
  switch (field.kind) {
    case 'boolean':
      return (
        <div className="field field-boolean" data-field={field.name}>
          <label htmlFor={id}>
            <input
              {...common}
              type="checkbox"
              checked={value === true}
              onChange={(event) => onChange(event.target.checked)}
            />
            {' '}
            {label}
          </label>
          {hint === '' ? null : <p id={hintId} className="field-hint muted">{visible(hint)}</p>}
          {error === undefined ? null : <p id={errorId} className="field-error">{error}</p>}
        </div>
      );
    case 'choices': {
      const picked = Array.isArray(value) ? value : [];
      return (
        <fieldset
          className="field field-choices"
          data-field={field.name}
          aria-invalid={error !== undefined}
          aria-describedby={describedBy}
          id={id}
          tabIndex={-1}
        >
          <legend>{label}</legend>
          {field.options.map((option, index) => (
            <label key={option.value} htmlFor={`${id}-${index}`}>
              <input
                id={`${id}-${index}`}
                type="checkbox"
                disabled={disabled}
                checked={picked.includes(option.value)}
                onChange={(event) => onChange(event.target.checked
                  ? [...picked, option.value]
                  : picked.filter((entry) => entry !== option.value))}
              />
              {' '}
              {visible(option.label)}
            </label>
          ))}
          {hint === '' ? null : <p id={hintId} className="field-hint muted">{visible(hint)}</p>}
          {error === undefined ? null : <p id={errorId} className="field-error">{error}</p>}
        </fieldset>
      );
    }
    case 'choice':
      control = (
        <select
          {...common}
          value={typeof value === 'string' ? value : ''}
          onChange={(event) => onChange(event.target.value)}
        >
          <option value="">{field.required ? 'Choose…' : '(none)'}</option>
          {field.options.map((option) => (
            <option key={option.value} value={option.value}>{visible(option.label)}</option>
          ))}
        </select>
      );
      break;
    case 'unsupported':
      control = <p id={id} className="muted">This page cannot show this kind of field.</p>;
      break;
    case 'text':
    case 'email':
    case 'uri':
    case 'date':
    case 'date-time':
    case 'number':
    case 'integer':
      control = (
        <input
          {...common}
          type={inputTypes[field.kind] ?? 'text'}
          value={typeof value === 'string' ? value : ''}
          {...(field.kind === 'number' ? { step: 'any' } : {})}
          {...(field.kind === 'integer' ? { step: 1 } : {})}
          {...(field.minimum === undefined ? {} : { min: field.minimum })}
          {...(field.maximum === undefined ? {} : { max: field.maximum })}
          onChange={(event) => onChange(event.target.value)}
        />
      );
  }
  return (
    <div className="field" data-field={field.name}>
      <label htmlFor={id}>{label}</label>
      {control}
      {hint === '' ? null : <p id={hintId} className="field-hint muted">{visible(hint)}</p>}
      {error === undefined ? null : <p id={errorId} className="field-error">{error}</p>}
    </div>
  );
}

/**
 * An MCP server's request for input (MCP-7): what it wants, its form, and Accept (send the form,
 * checked here first), Decline or Cancel. The page passes the answer on; the card gives way to
 * how the request ended when the server says so (`elicitation_resolved`): answered here or by
 * another client, or declined because nobody answered in time.
 */
export const ElicitationCard = memo(function ElicitationCard({
  card,
  sessionId,
  canAnswer,
}: {
  card: ElicitationItem;
  sessionId: string;
  canAnswer: boolean;
}) {
  const controller = useController();
  const fields = useMemo(() => formFields(card.schema), [card.schema]);
  const [values, setValues] = useState<FormValues>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const prefix = useId();
  const box = useRef<HTMLDivElement>(null);
  const answeredHere = useRef(false);
  const resolved = card.resolution;
  // The form goes when the request resolves: the focus it had moves to the card, so keyboard use
  // goes on in this panel instead of falling back to the page.
  useLayoutEffect(() => {
    const focusLost = document.activeElement === null || document.activeElement === document.body;
    if (resolved !== undefined && answeredHere.current && focusLost) box.current?.focus();
  }, [resolved]);
  const title = `Request for input from MCP server ${JSON.stringify(card.server)}`;
  if (resolved !== undefined) {
    return (
      <div
        ref={box}
        tabIndex={-1}
        role="group"
        aria-label={title}
        data-testid="elicitation-card"
        className="elicitation resolved"
      >
        <p className="elicitation-outcome" data-testid="elicitation-outcome">
          {title}
          {': '}
          <strong>{elicitationOutcomeText(resolved.action, resolved.by)}</strong>
        </p>
        <p className="muted">{visible(card.message)}</p>
      </div>
    );
  }
  const disabled = !canAnswer || card.answering !== undefined;
  const idOf = (index: number): string => `${prefix}-field-${index}`;
  const send = (reply: ElicitationReply): void => {
    answeredHere.current = true;
    controller.answerElicitation(sessionId, card.requestId, reply);
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    if (disabled) return;
    const checked = checkForm(fields, values);
    if (!checked.ok) {
      setErrors(checked.errors);
      const first = fields.findIndex((field) => checked.errors[field.name] !== undefined);
      box.current?.querySelector<HTMLElement>(`[id="${idOf(first)}"]`)?.focus();
      return;
    }
    setErrors({});
    send({ action: 'accept', content: checked.content });
  };
  // Esc while filling the form in is not meant for the task (Esc elsewhere interrupts it).
  const onKeyDown = (event: KeyboardEvent<HTMLFormElement>): void => {
    if (event.key === 'Escape') event.stopPropagation();
  };
  const errorCount = Object.keys(errors).length;
  return (
    <div
      ref={box}
      tabIndex={-1}
      role="group"
      aria-label={title}
      data-testid="elicitation-card"
      className="elicitation"
    >
      <p className="approval-head">
        <span className="approval-title">Input requested</span>
        <span className="tool-name">{`MCP server ${card.server}`}</span>
      </p>
      <p className="reason">{visible(card.message)}</p>
      <form className="elicitation-form" noValidate onSubmit={onSubmit} onKeyDown={onKeyDown}>
        {fields.map((field, index) => (
          <Field
            key={field.name}
            field={field}
            id={idOf(index)}
            value={values[field.name]}
            error={errors[field.name]}
            disabled={disabled}
            onChange={(value) => {
              setValues((current) => ({ ...current, [field.name]: value }));
              if (errors[field.name] !== undefined) {
                setErrors(({ [field.name]: _fixed, ...rest }) => rest);
              }
            }}
          />
        ))}
        {errorCount > 0 ? (
          <p className="error-mark" role="alert">
            {errorCount === 1 ? 'One field needs' : `${errorCount} fields need`}
            {' '}
            fixing before the form can be sent.
          </p>
        ) : null}
        <div className="approval-actions">
          <button type="submit" className="primary" disabled={disabled}>Accept</button>
          <button type="button" disabled={disabled} onClick={() => send({ action: 'decline' })}>
            Decline
          </button>
          <button type="button" disabled={disabled} onClick={() => send({ action: 'cancel' })}>
            Cancel
          </button>
        </div>
      </form>
      {card.answering !== undefined ? (
        <p className="muted" role="status">
          Sent
          {' '}
          {actionWords[card.answering]}
          ; waiting for the server.
        </p>
      ) : null}
      {!canAnswer && card.answering === undefined ? (
        <p className="muted">Only a connected controller of this session can answer.</p>
      ) : null}
      {card.error !== undefined ? <p className="error-mark" role="alert">{card.error}</p> : null}
    </div>
  );
});
