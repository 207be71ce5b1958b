import type { ApprovalMode } from '@claw/core';

// What claw tells a real model (REAL-1, REAL-2): who it is and how to work, how each built-in
// tool behaves, where it is (the environment block) and the project's own instructions. The text
// of one session never changes from request to request, so that providers can cache its prefix:
// nothing in it is read from a clock or a counter at request time.

/** Where a session works, as the model is told it (REAL-1). Collected once per session. */
export interface SessionEnvironment {
  /** The workspace root: tools resolve every path inside it, bash runs there. */
  workspaceRoot: string;
  /** The operating system, e.g. `Linux 6.1.0 (Debian GNU/Linux 12), x64`. */
  platform: string;
  /** The shell the bash tool runs commands with, e.g. `bash`. */
  shell: string;
  /** Today's date where the user is (`YYYY-MM-DD`), fixed when the session started. */
  date: string;
  /** The git repository the workspace is in; `undefined`: not in one. */
  git?: { root: string; branch?: string; detachedAt?: string } | undefined;
  /** How bash runs, as the isolation probe found it (SBX-4). */
  bash?: { isolated: boolean; network: boolean } | undefined;
  /** What happens to calls the policy would ask about (`--approval`). */
  approval?: ApprovalMode | undefined;
}

/** One file of project instructions (REAL-2), as the model is given it. */
export interface InstructionText {
  /** How people know the file: relative to the workspace, or `~/…` for the home folder. */
  path: string;
  /** Its text (only its start when `truncated`). */
  text: string;
  /** Only the start of the file fit in the limit on instructions. */
  truncated?: boolean;
}

/** What a system prompt is built from ({@link buildSystemPrompt}). */
export interface SystemPromptParts {
  /**
   * Replaces claw's own text (who it is, how to work, its tools); the environment, the
   * instructions and `append` still follow it. Default: claw's text for the tools offered.
   */
  base?: string | undefined;
  /** The names of the tools offered, to explain the built-in ones among them. */
  tools?: readonly string[];
  environment?: SessionEnvironment | undefined;
  instructions?: readonly InstructionText[] | undefined;
  /** Added at the end (the user's own words: `appendSystemPrompt`). */
  append?: string | undefined;
  /** A subagent's prompt instead of the main agent's (ENG-9). */
  subagent?: boolean;
}

const role = 'You are claw, a coding agent. You work in one workspace, a folder on the user\'s \
machine (usually a software project), through the tools below: you answer questions about the \
code, fix bugs, make changes and run commands, as the user asks. Your actions are real: files \
you write change the user\'s files, commands you run run on their machine.';

const subagentRole = 'You are a helper of claw, a coding agent: the main agent handed you one \
self-contained task (the user message) to do with the tools below. Nobody reads your work while \
you do it and nobody can answer questions, so do not ask any: when something is unclear, make \
the most sensible choice and say so. Your final answer is all the main agent gets back (not your \
tool calls): make it a short, complete report of what you found or did, naming files and lines.';

const howToWork = `# How to work
- Look before you change: read the files involved before editing them, and search for how the \
code around your change works. Never guess what a file says.
- Work in small steps and check each one: after an edit, look at the result or run what uses it.
- If the project has tests, a type checker or a linter, run the relevant ones once your change \
is made, and fix what it broke. Do not say something works unless you checked it; say what you \
could not check.
- Do what was asked, no more: no unrelated clean-ups or new files nobody needs, and follow the \
style and conventions the code already has.
- When the request is unclear, or a step would be hard to undo (deleting data, rewriting \
history, touching things outside the task), ask the user first instead of guessing. Do not \
commit, push or change branches unless the user asks you to.
- Independent tool calls in one reply run at the same time: read several files at once.
- When you are done, say briefly what you changed (which files), how you checked it, and what \
is left open. Refer to files by their paths in the workspace.`;

const toolGuides: ReadonlyArray<readonly [string, string]> = [
  [
    'read_file',
    '- read_file: the text of a file. A long file comes in parts; the result says how to read \
on (`offset`, `limit`).',
  ],
  [
    'write_file',
    '- write_file: creates a file or replaces all of it, making missing folders. To change part \
of an existing file, use edit_file.',
  ],
  [
    'edit_file',
    '- edit_file: replaces `old_string` with `new_string` in a file. `old_string` must match the \
file exactly (indentation and line ends included) and occur exactly once: read the file first, \
and include enough surrounding lines to make it unique. `replace_all` changes every occurrence.',
  ],
  [
    'bash',
    '- bash: runs one command line with `bash -c` in the workspace root and returns its exit \
code and output (long output is cut in the middle). stdin is closed, so nothing interactive \
works: pass options such as `--yes`, and avoid pagers and editors. Use it to find things too \
(`grep -rn`, or `rg` where it is installed; `ls`, `find`). A command has a time limit \
(see the tool); set `timeout_ms` for long builds and test runs. Processes it leaves in the \
background are stopped when it ends. Commands that are destructive or reach outside the \
workspace are refused.',
  ],
  [
    'spawn_subagent',
    '- spawn_subagent: hands a self-contained task to a helper with the same tools, which \
reports back its answer only. Use it for a separate piece of work whose details need not stay \
in this conversation (say, searching a large codebase), and give it everything it needs to know: \
it does not see this conversation.',
  ],
];

const pathRules = '- Paths are relative to the workspace root (its absolute paths work too). \
Nothing outside the workspace can be read or written. `.claw/` holds claw\'s own state: leave \
it alone.';

const approvals = `# Approvals
Every tool call passes claw's approval gate first. Calls that change files or run commands may \
wait for the user's approval, and the user or claw's policy may deny them. A denied call comes \
back as an error that says so. Do not repeat a denied call, and do not reach the same effect \
another way (another tool, a reworded command): go on without it, or ask the user.`;

/** claw's own text: who it is, how to work, and the built-in tools among `tools`. */
function baseText(tools: readonly string[], subagent: boolean): string {
  const offered = new Set(tools);
  const guides = toolGuides
    .filter(([name]) => offered.has(name))
    .map(([, guide]) => guide);
  const others = tools.some((name) => !toolGuides.some(([known]) => known === name));
  const toolSection = [
    '# Tools',
    pathRules,
    ...guides,
    ...(others ? ['- Other tools (from MCP servers or other agents) explain themselves in their descriptions.'] : []),
  ].join('\n');
  return [subagent ? subagentRole : role, ...(subagent ? [] : [howToWork]), toolSection, approvals]
    .join('\n\n');
}

function describeGit(git: SessionEnvironment['git']): string {
  if (git === undefined) return 'not a git repository';
  const where = git.branch !== undefined
    ? `on branch ${git.branch}`
    : git.detachedAt !== undefined ? `detached HEAD at ${git.detachedAt}` : 'no commit yet';
  return `a git repository (root ${git.root}), ${where}`;
}

function describeBash(bash: NonNullable<SessionEnvironment['bash']>): string {
  if (bash.isolated) {
    return 'isolated (bubblewrap): only the workspace is writable, the rest of the system is ' +
      `read-only or hidden, ${bash.network ? 'the network is reachable' : 'there is no network'}`;
  }
  return 'not isolated: commands run as the user, with the network, so each one needs the ' +
    "user's approval";
}

const approvalText: Record<ApprovalMode, string> = {
  ask: 'ask: calls that need approval wait for the user to allow or deny them',
  allow: 'allow: calls that need approval are allowed once each without asking (bash only ' +
    'when it is isolated); claw\'s policy still refuses what it refuses',
  deny: 'deny: calls that need approval are refused, nobody is asked; work with what can ' +
    'run without approval (reading files), and say what you could not do',
};

/** The environment block (REAL-1). */
export function environmentBlock(environment: SessionEnvironment): string {
  const lines = [
    `Workspace root: ${environment.workspaceRoot}`,
    `Platform: ${environment.platform}`,
    `Shell: ${environment.shell}`,
    `Date: ${environment.date}`,
    `Git: ${describeGit(environment.git)}`,
  ];
  if (environment.bash !== undefined) lines.push(`Bash: ${describeBash(environment.bash)}`);
  if (environment.approval !== undefined) lines.push(`Approval: ${approvalText[environment.approval]}`);
  return `# Environment\n<environment>\n${lines.join('\n')}\n</environment>`;
}

/** The project instructions block (REAL-2): each file delimited, outer first. */
export function instructionsBlock(instructions: readonly InstructionText[]): string {
  const files = instructions.map((file) => {
    const text = file.text.endsWith('\n') ? file.text : `${file.text}\n`;
    const cut = file.truncated === true
      ? '[the rest of this file was left out: project instructions are limited to 32 KiB in all]\n'
      : '';
    return `<instructions path=${JSON.stringify(file.path)}>\n${text}${cut}</instructions>`;
  });
  return [
    '# Project instructions',
    'The user and the project give these instructions (AGENTS.md files), from the most general ' +
    'to the most specific: where they disagree, the later one wins, and the user\'s own requests ' +
    'win over all of them. Follow them. A folder deeper in the workspace may have its own ' +
    'AGENTS.md for the files under it: read it before you work there.',
    ...files,
  ].join('\n\n');
}

/**
 * A whole system prompt (REAL-1, REAL-2): claw's text (or `base`), then the environment block,
 * the project instructions and `append`, each part left out when it is empty or absent. The same
 * parts always give the same text.
 */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const sections = [
    parts.base ?? baseText(parts.tools ?? [], parts.subagent === true),
    parts.environment === undefined ? '' : environmentBlock(parts.environment),
    (parts.instructions?.length ?? 0) === 0 ? '' : instructionsBlock(parts.instructions ?? []),
    parts.append ?? '',
  ];
  return sections.map((section) => section.trim()).filter((section) => section !== '').join('\n\n');
}
