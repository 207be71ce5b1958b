import { settingFlagsHelp } from '@claw/runtime';
import { minLeaseMs, serveDefaults } from './args.js';

/** The text of `claw-server --help` (CH-12). */
export function helpText(version: string): string {
  const s = serveDefaults;
  return `claw-server ${version} — agent sessions over TCP and WebSocket, shared by many clients

Usage:
  claw-server [options]           serve the sessions of the workspace(s) until SIGTERM/Ctrl-C
  claw-server --demo              the same with a scripted demo model: no API key needed
  claw-server --version | --help

Listening:
  --workdir <dir>                 a workspace root sessions may use (repeatable; the first is
                                  the default; default: the current folder, or with --demo a
                                  fresh temporary folder with a small project)
  --host <addr>                   address of both ports (default: ${s.host}). Any other than a
                                  loopback address needs --allow-remote and a given token
  --tcp-port <n>                  JSON lines, one message per line (default: ${s.tcpPort}; 0 = free)
  --http-port <n>                 WebSocket at /ws, the web console at /, /healthz, /readyz
                                  (default: ${s.httpPort}; 0 = a free port)
  --port-file <file>              write {"tcp":N,"http":M,"pid":P} there once listening
  --token-file <file>             the token clients must send (else CLAW_SERVER_TOKEN, else a
                                  new random one, printed in the console URL and kept outside
                                  the workspace: see Files). A token you give is never printed
  --allow-remote                  permit a non-loopback --host (needs --token-file or
                                  CLAW_SERVER_TOKEN)
  --allow-origin <origin>         one more web origin allowed to open WebSockets, e.g.
                                  https://console.example.com (repeatable)
  --shutdown-grace-ms <n>         on SIGTERM/SIGINT, running tasks get this long to finish
                                  before they are canceled (default: ${s.shutdownGraceMs})
  --idle-timeout-ms <n>           a session no client watched for this long has its pending
                                  approvals denied and is unloaded; an MCP server's request
                                  for input nobody answers for this long is declined
                                  (default: ${s.idleTimeoutMs})
  --a2a-approval-timeout-ms <n>   a tool call of a task sent over A2A waits this long for an
                                  answer in a console before it is denied; with no console on
                                  the session it is denied at once (default: ${s.a2aApprovalTimeoutMs})
  --a2a-max-tasks <n>             at most this many tasks sent over A2A run at once; a message
                                  that would start one more is refused, to be sent again when
                                  one finishes (default: ${s.a2aMaxTasks})
  --a2a-task-retention <duration> a finished A2A task stays answerable (GetTask) this long,
                                  e.g. 90m, 24h, 7d; its session stays in the store either way
                                  (default: ${s.a2aTaskRetention}; at most 10,000 are remembered)
  --store <url>                   where sessions are stored: file (default: <workdir>/.claw/
                                  sessions) or postgres://user@host/db, one PostgreSQL (15+)
                                  shared by several claw-server instances (else CLAW_STORE_URL);
                                  any of them serves any session, grants and audit are shared,
                                  and a workspace is known by .claw/workspace.json wherever mounted
                                  (a database that stops answering fails requests, and shutdown
                                  stops waiting for it, instead of hanging; the URL's parameters
                                  set how soon: connect_timeout (seconds, default 5),
                                  statement_timeout (ms, 10000), query_timeout (ms without any
                                  answer, 15000), idle_in_transaction_session_timeout (ms, 5000),
                                  keepalives (0 = no TCP keep-alive) and keepalives_idle
                                  (seconds, 10), e.g. postgres://claw@db/claw?query_timeout=30000)
  --lease-ms <n>                  with a PostgreSQL store: how long an instance's hold on a
                                  session lasts without renewal; another instance may take the
                                  session over after it (default: ${s.leaseMs}, at least ${minLeaseMs})
  --lease-renew-ms <n>            how often the hold is renewed, below half the lease
                                  (default: a third of --lease-ms, ${s.leaseRenewMs} by default)

Tasks (as claw; flag > environment > <workdir>/.claw/config.json (when trusted) >
~/.config/claw/config.json > default). claw-server never asks whether to trust a workspace: its
own .claw/config.json, mcp.json and a2a.json count once the workspace is trusted (claw trust
--workdir <dir>, recorded in ~/.config/claw/trusted.json) or with --trust-workspace; until then
only their narrowing settings are used, no MCP server of it is started, and the log says what
was ignored:
  --approval ask|allow|deny       tools the policy would ask about: ask the connected clients
                                  (default), allow each once, or deny
${settingFlagsHelp()}  -h, --help                      print this help
  -v, --version                   print the version

Environment:
  OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL   the model server, as for claw
  CLAW_SERVER_TOKEN                               the token, when --token-file is not given
  CLAW_STORE_URL                                  the session store, when --store is not given
  XDG_STATE_HOME                                  where generated tokens are kept (default:
                                                  ~/.local/state; only an absolute path counts)
  XDG_CONFIG_HOME                                 where your settings and trusted workspaces
                                                  are (default: ~/.config)

Protocol (one JSON object per line on TCP, per text message on /ws):
  first  {"type":"hello","token":"…","protocol":1}       → welcome (the sessions there are)
  then   {"type":"open","session_id":"…","after":N}      → session_opened, the events after N
         {"type":"prompt","content":"…"}                 → the task's events, live
         {"type":"approval_response","request_id":"…","decision":"allow_once"|"allow_session"|"deny"}
         {"type":"interrupt"}  {"type":"close","end":true}  {"type":"ping"}
  A session outlives its connections: reconnect, open it with the last seq you got, and get
  exactly what you missed. The token is never accepted in a URL; web pages of other origins
  cannot open WebSockets; the TCP port hangs up on anything that looks like HTTP.

Files (while it runs; removed when it stops):
  <workdir>/.claw/server.json     {"tcp":N,"http":M,"pid":P}, with a generated token also
                                  "token_file": where that token is (never the token itself)
  $XDG_STATE_HOME/claw/servers/<name>-<hash>.json
                                  a generated token (mode 0600, folder 0700) with the ports, the
                                  pid and the workspace's real path. <name>: the first
                                  workspace's folder name; <hash>: 16 hex digits of the SHA-256
                                  of its real path

Exit status:
  0    stopped by SIGTERM/SIGINT (tasks finished or were canceled; sessions stored)
  1    failed while running
  2    usage or configuration error (bad option, missing folder, a non-loopback --host
       without --allow-remote and a token, a port in use, OPENAI_API_KEY not set)

Examples:
  claw-server --demo --tcp-port 0 --http-port 0 --port-file ports.json
  claw-server --workdir ~/project --workdir ~/other
  printf '%s\\n' '{"type":"hello","token":"…","protocol":1}' '{"type":"prompt","content":"hi"}' \\
    | nc 127.0.0.1 8080
`;
}
