import { visible, withoutColourCodes } from '@claw/channel/protocol';
import { memo } from 'react';
import type { ToolItem } from '../state/types.js';
import {
  callSummary,
  diffOf,
  parseArguments,
  parseBashResult,
  type DiffLine,
} from '../tool-format.js';
import { Folded } from './Folded.js';

const diffLimit = 40;

function DiffView({ lines }: { lines: DiffLine[] }) {
  const render = (part: DiffLine[], offset: number) =>
    part.map((line, index) => (
      <span key={offset + index} className={line.sign === '+' ? 'diff-add' : 'diff-del'}>
        {`${line.sign} ${line.text}\n`}
      </span>
    ));
  return (
    <div className="diff" aria-label="Change">
      <pre>{render(lines.slice(0, diffLimit), 0)}</pre>
      {lines.length > diffLimit ? (
        <details>
          <summary>
            {lines.length - diffLimit}
            {' '}
            more lines
          </summary>
          <pre>{render(lines.slice(diffLimit), diffLimit)}</pre>
        </details>
      ) : null}
    </div>
  );
}

function CallBody({ call }: { call: ToolItem }) {
  const args = parseArguments(call.arguments);
  const diff = diffOf(call.name, args);
  if (diff !== undefined) return <DiffView lines={diff} />;
  if (call.name === 'bash' && typeof args?.command === 'string') {
    return <pre className="command">{`$ ${args.command}`}</pre>;
  }
  if (args !== undefined && callSummary(args) !== undefined && Object.keys(args).length === 1) {
    return null;
  }
  if (call.arguments === '' || call.arguments === '{}') return null;
  return <Folded className="arguments" text={args === undefined ? call.arguments : JSON.stringify(args, null, 2)} lines={6} />;
}

function ResultBody({ call }: { call: ToolItem }) {
  const result = call.result;
  if (result === undefined) return null;
  // Colour codes are terminal noise in a page (and could hide text in a terminal).
  const text = withoutColourCodes(result.text);
  const bash = call.name === 'bash' ? parseBashResult(text) : undefined;
  if (bash === undefined) return <Folded className="output" text={text} lines={10} />;
  return (
    <>
      <p className="exit">{bash.status}</p>
      {bash.stdout !== '' ? <Folded className="output" text={bash.stdout} lines={12} /> : null}
      {bash.stderr !== '' ? (
        <>
          <p className="stream-label">stderr</p>
          <Folded className="output stderr" text={bash.stderr} lines={12} />
        </>
      ) : null}
      {bash.stdout === '' && bash.stderr === '' ? <p className="muted">no output</p> : null}
    </>
  );
}

/** One tool call and, once it came, its result. */
export const ToolCallView = memo(function ToolCallView({ call }: { call: ToolItem }) {
  const summary = callSummary(parseArguments(call.arguments));
  const error = call.result?.isError === true;
  return (
    <div data-testid="tool-call" className={`tool${error ? ' tool-error' : ''}`}>
      <p className="tool-head">
        <span className="tool-name">{call.name}</span>
        {summary !== undefined && call.name !== 'bash' ? <code className="tool-target">{summary}</code> : null}
        {call.result === undefined ? <span className="muted"> running…</span> : null}
      </p>
      <CallBody call={call} />
      {call.result === undefined && call.progress !== undefined ? (
        <p data-testid="tool-progress" className="tool-progress muted" role="status">
          {visible(call.progress)}
        </p>
      ) : null}
      {call.result !== undefined ? (
        <div data-testid="tool-result" data-error={error ? 'true' : 'false'} className="tool-result">
          {error ? <p className="error-mark">error</p> : null}
          <ResultBody call={call} />
        </div>
      ) : null}
    </div>
  );
});
