import { useId, useState, type FormEvent } from 'react';

/**
 * Shown instead of a blank page when there is no token or the server refused it: how to get the
 * console's URL, and a field to paste a token into.
 */
export function TokenHelp({
  refused,
  onToken,
}: {
  refused: boolean;
  onToken: (token: string) => void;
}) {
  const [token, setToken] = useState('');
  const inputId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const given = token.trim();
    if (given !== '') onToken(given);
  };
  return (
    <div className="token-help">
      <div role="alert">
        <h2>{refused ? 'The server refused this token' : 'This console needs the server token'}</h2>
        <p>
          Open the console URL that
          {' '}
          <code>claw-server</code>
          {' '}
          prints when it starts, the one
          ending in
          {' '}
          <code>/#token=…</code>
          . The token is also in
          {' '}
          <code>&lt;workdir&gt;/.claw/server.json</code>
          {' '}
          (the
          {' '}
          <code>token</code>
          {' '}
          field),
          unless the server was given one with
          {' '}
          <code>--token-file</code>
          {' '}
          or
          {' '}
          <code>CLAW_SERVER_TOKEN</code>
          .
        </p>
      </div>
      <form className="token-form" onSubmit={submit}>
        <label htmlFor={inputId}>Token</label>
        <input
          id={inputId}
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={token}
          onChange={(event) => setToken(event.target.value)}
        />
        <button type="submit" disabled={token.trim() === ''}>Connect</button>
      </form>
    </div>
  );
}
