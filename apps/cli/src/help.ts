import { defaultSettings, settingFlagsHelp } from '@claw/runtime';
import { thinkingPreviewLines } from './thinking.js';

/** The text of `claw --help`: every option with its default, environment, exit statuses, files. */
export function helpText(version: string): string {
  const d = defaultSettings;
  return `claw ${version} — a coding agent in your terminal

Usage:
  claw [options]                  interactive REPL in the workspace
  claw -p, --prompt <text>        one task, then exit. Text piped to claw (a pipe or a file
                                  on stdin) goes with it, up to 1 MiB (a pipe silent for 5 s
                                  is left); -p - takes the whole task from stdin
  claw demo [options]             a built-in scripted model shows the whole loop; no key needed
  claw sessions [--workdir <dir>] the workspace's saved sessions, most recent first: id, last
                                  activity, messages, tokens (resume one with --session <id>)
  claw mcp list [--workdir <dir>] the workspace's MCP servers (.claw/mcp.json): each one's
                                  state, tools and last error; exit 1 when one failed or
                                  needs a login
  claw mcp login <name>           log in to a url server with OAuth: claw opens the login page
                                  in your browser (BROWSER, else xdg-open or open; the URL is
                                  printed too) and waits up to 5 minutes for the browser to
                                  come back to it on 127.0.0.1. The token is kept in
                                  $XDG_STATE_HOME/claw/mcp-auth.json (default
                                  ~/.local/state/claw; only you can read it), never in the
                                  workspace, and refreshed by itself. The REPL, -p and
                                  claw-server never open a browser: a server that needs a
                                  login is skipped with this command in the warning
  claw mcp logout <name>          remove the token claw keeps for that server (both take
                                  --workdir <dir>)
  claw trust [--workdir <dir>]    trust the workspace's own settings (.claw/config.json,
                                  mcp.json, a2a.json) as they are now; shows what they do.
                                  --revoke takes the trust back, --list lists trusted folders
  claw acp                        an Agent Client Protocol agent on stdin/stdout, for editors
                                  (Zed, JetBrains, Neovim, Emacs); claw acp --help says more
  claw --version | --help

Options:
  --workdir <dir>                 workspace root; tools only reach files inside it
                                  (default: the current folder)
  --session <id>                  session id (default: "default"); an existing one is resumed.
                                  One claw process at a time may use a session: another one
                                  stops at once (exit 2) and says which process has it
  --output text|stream-json|json  text (default): the answer as it streams, tool calls shown
                                  compactly; stream-json (with -p or demo): the channel
                                  protocol's events, one JSON object per line on stdout, as
                                  claw-server sends them: session_opened, then the session's
                                  events, each with session_id, seq, at and task_id
                                  (task_started, state, thinking, thinking_delta (the
                                  model's reasoning), text_delta, text_completed,
                                  tool_call, tool_result, approval_request, approval_resolved,
                                  model_retry, usage, context_compacted), and tool_progress (no seq: a running
                                  tool's progress, not kept), ending with task_completed |
                                  task_canceled | task_failed; notes go to stderr. json (with
                                  -p or demo): one object at the end: {"type": "result",
                                  session_id, task_id, status (completed | canceled | failed |
                                  error), answer, reason or error {code, message},
                                  model_calls, tool_calls, failed_tool_calls, tokens,
                                  cached_tokens, cost_usd, unpriced_calls, elapsed_ms}
  --approval ask|allow|deny       tools the policy would ask about: ask the user (default on a
                                  TTY), allow each once, or deny (default without a TTY).
                                  Policy denials are never overridden. While bash is not
                                  isolated (no bubblewrap), only a person may allow bash: with
                                  allow, or without a terminal, bash calls are denied.
${settingFlagsHelp()}  --verbose                       text output: show all of the model's thinking (reasoning
                                  models), not only its first ${thinkingPreviewLines} lines per reply
  -h, --help                      print this help
  -v, --version                   print the version

Settings resolve as: flag > environment > <workdir>/.claw/config.json (when trusted) > your
~/.config/claw/config.json > default. A config file takes the settings in camelCase, e.g.
{"model": "gpt-4.1", "maxTurns": 300,
"approval": "ask", "sandbox": {"isolation": "required"}, "systemPromptFile": "prompt.md",
"appendSystemPrompt": "Answer briefly."}; an unknown key is an error. Prices per model:
"prices": {"my-model": {"inputPerMillion": 1, "cachedInputPerMillion": 0.1,
"outputPerMillion": 4}} (US dollars; cached input costs as much as input unless given).
"allowFiles": [".env.local"] lets the file tools use .env files claw otherwise keeps from the
model (* and ** patterns).

Trust: a workspace's own .claw/config.json, mcp.json and a2a.json are used only once you trust
them (claw trust, or yes to the REPL's question; a changed file asks again). Until then claw
takes from config.json only what narrows (a lower limit, a stricter approval or sandbox), starts
no MCP server, uses no A2A peer, and says what it left out. -p and claw acp never ask:
--trust-workspace trusts for one run. Your own ~/.config/claw/config.json is always used.

What the model is told: claw's system prompt (how to work, how its tools behave), the
environment (workspace, platform, date, git branch, how bash runs, the approval mode) and the
project instructions: AGENTS.md files, the user's own (~/.config/claw/AGENTS.md, or under
$XDG_CONFIG_HOME) first, then from the git repository's root down to the workspace, 32 KiB in
all. claw names them when it starts; /status lists them.

Environment:
  OPENAI_API_KEY     API key of the model server (required, except for claw demo)
  OPENAI_BASE_URL    an OpenAI-compatible server instead of OpenAI's
                     (e.g. http://localhost:11434/v1)
  OPENAI_MODEL       model name (default: ${d.model})
  NO_COLOR           set to turn colours off (they are only used on a terminal)
  XDG_CONFIG_HOME    where the user's claw folder is (default ~/.config): claw/AGENTS.md,
                     claw/config.json (your settings), claw/trusted.json (trusted workspaces)
  XDG_STATE_HOME     where claw keeps MCP login tokens (default ~/.local/state):
                     claw/mcp-auth.json
  BROWSER            the program claw mcp login opens the login page with, the URL its only
                     argument (default: xdg-open; open on macOS)

In the REPL:
  /help /clear /exit   help, forget the conversation, quit (Ctrl-D quits too)
  /status              session, model, approval, how bash runs, instructions, tokens so far
  /compact [keep]      compact the conversation now: old tool results pruned, the older part
                       summarised (claw does it by itself at 80% of --context-window-tokens)
  line \\ + Enter       go on on the next line (one task of several lines)
  up-arrow             what you typed before, also in earlier runs here (.claw/history.jsonl)
  pasted text          one task, whatever its lines: press Enter to send it
  y / a / n            answer an approval question: allow once, allow for this session, deny
                       (typed: pasted text never answers one)
  Ctrl-C               cancel the running task (and its question); when idle, clear what
                       you are typing, or with nothing typed, quit

Exit status:
  0    the task completed (REPL: /exit or end of input)
  1    the task failed (model or tool error, a budget, or --max-turns reached)
  2    usage or configuration error (bad option or value, missing --workdir folder,
       bad .claw/config.json, OPENAI_API_KEY not set, the session in use by another
       claw process)
  130  canceled with Ctrl-C / SIGINT (REPL: Ctrl-C while idle)

Files, in <workdir>/.claw/:
  config.json        settings (see above)
  sessions/          sessions by id (--session); <id>.lock while a process has one open
  grants.json        "allow for this session" answers, per session
  audit.jsonl        every approval decision
  traces/            a trace of every run (OpenTelemetry, OTLP JSON lines)
  mcp.json           MCP servers whose tools claw offers as mcp_<server>_<tool>, e.g.
                     {"mcpServers": {"files": {"command": "npx", "args": ["-y", "pkg"]},
                      "docs": {"url": "https://example.com/mcp",
                               "headers": {"Authorization": "Bearer \${DOCS_TOKEN}"}}}}
                     ("env" for a command, "headers" for a url; \${VAR} from the environment;
                     "risk": safe|mutating|dangerous (default dangerous: asks), per tool in
                     "tools": {"<tool>": {"risk": ...}}; "enabled", "startupTimeoutMs",
                     "callTimeoutMs"). A server that fails is skipped with a warning.
                     "auth": "oauth" on a url server: log in with OAuth (claw mcp login
                     <name>); claw registers itself, or give the client you registered:
                     "auth": {"type": "oauth", "clientId": "...", "clientSecret":
                     "\${SECRET}", "scopes": ["..."]} ("clientMetadataUrl": an https
                     client metadata document, where the server takes those). A url
                     server without "auth" that answers 401 and publishes OAuth metadata
                     is logged in to the same way

Examples:
  claw                                      REPL in the current folder
  claw -p "explain what src/main.ts does"   one task, answer on stdout
  git diff | claw -p "review this change"   the diff goes with the task
  claw -p "add a test for parse()" --approval allow --output stream-json
  claw -p "what does main.ts do" --output json | jq -r .answer
  claw --workdir ~/project --session refactor
  claw demo --approval allow                the whole loop, unattended, no key
  claw mcp list                             are the MCP servers up, which tools do they give
  claw mcp login github                     log in to the server "github" of .claw/mcp.json
  claw trust --workdir ~/project            use the project's own .claw settings from now on
  OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=qwen2.5-coder claw
`;
}

/** The text of `claw acp --help`: how an editor runs claw, what is supported. */
export function acpHelpText(version: string): string {
  return `claw ${version} acp — claw as an Agent Client Protocol agent, for editors

Usage:
  claw acp [options]              speak ACP (JSON-RPC, protocol version 1) on stdin/stdout;
                                  stdout carries protocol messages only, notes go to stderr.
                                  The editor starts it; it ends when the editor closes stdin
                                  (a running task is canceled, every session is stored)

Options (as for claw; each session's folder's own .claw settings count once you trust that
folder with claw trust, or for every folder with --trust-workspace; claw acp never asks):
  --approval ask|allow|deny       calls the policy would ask about: ask the editor (default),
                                  allow each once, or deny. Policy denials are never asked
${settingFlagsHelp()}  -h, --help                      print this help

Zed (settings.json):
  "agent_servers": {
    "claw": {
      "command": "claw",
      "args": ["acp"],
      "env": { "OPENAI_API_KEY": "sk-...", "OPENAI_MODEL": "gpt-4.1" }
    }
  }
Any other ACP client: run \`claw acp\` as the agent's command, with OPENAI_API_KEY (and
OPENAI_BASE_URL, OPENAI_MODEL) in its environment.

What it supports:
  initialize                      agent info, loadSession, text prompts with embedded
                                  resources and resource links (no images or audio)
  session/new {cwd, mcpServers}   cwd (absolute) is the session's workspace; the editor's MCP
                                  servers (stdio and http) join the workspace's .claw/mcp.json
  session/load                    a claw session of that workspace: its history is replayed as
                                  updates (a call a crash interrupted shows as failed), then
                                  the session goes on
  session/prompt                  one task; stop reasons end_turn, max_turn_requests (at
                                  --max-turns) and cancelled; a task that fails is an error
  session/cancel                  cancels the running task and its questions
  updates                         the answer and the model's thinking as chunks; each tool call
                                  with its kind, title, status, file locations, a diff for
                                  write_file/edit_file and the output of bash; usage (tokens and
                                  cost); compaction
  permissions                     a call claw's policy asks about is session/request_permission
                                  (allow once, allow always = for this session, reject); the
                                  answer is audited like any other
  requests for input              an MCP server's form (MCP elicitation) is elicitation/create
                                  to an editor that offers elicitation.form at initialize; its
                                  answer is checked against the form (one that does not fit is
                                  declined); an editor that does not offer forms: declined
  editor files                    when the editor offers fs/read_text_file and
                                  fs/write_text_file, read_file, write_file and edit_file go
                                  through it (unsaved buffers are read, edits show in the
                                  editor), after claw's path checks; bash runs in claw's own
                                  sandbox, not in an editor terminal

Exit status: 0 when the editor closed the connection; 2 for a usage error.
`;
}
