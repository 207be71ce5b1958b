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
          . A token the server generated is also kept outside the workspace, in
          {' '}
          <code>~/.local/state/claw/servers/</code>
          {' '}
          (or
          {' '}
          <code>$XDG_STATE_HOME/claw/servers/</code>
          ): the
          {' '}
          <code>token_file</code>
          {' '}
          field of
          {' '}
          <code>&lt;workdir&gt;/.claw/server.json</code>
          {' '}
          names the file, and its
          {' '}
          <code>token</code>
          {' '}
          field is the token.
        </p>
        <p>
          A token given to the server with
          {' '}
          <code>--token-file</code>
          {' '}
          or
          {' '}
          <code>CLAW_SERVER_TOKEN</code>
          {' '}
          is never printed: paste the one that was set into the field below, or add
          {' '}
          <code>#token=&lt;token&gt;</code>
          {' '}
          to the URL.
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
