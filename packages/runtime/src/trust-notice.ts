import { readFile } from 'node:fs/promises';
import type { IgnoredSetting } from './settings.js';
import type { TrustedSettingsFile, WorkspaceTrust } from './trust.js';

// What claw says about an untrusted workspace (TRUST-2, TRUST-3): one line naming what it did not
// use and how to trust, and — before the user is asked — what the files would do.

const longest = 120;

/**
 * The one line an app says when it did not use some of a workspace's settings because the
 * workspace is not trusted; undefined when nothing was left out (trusted, or only narrowing
 * settings). `howToTrust` ends it (e.g. "run `claw trust` to use them").
 */
export function untrustedNotice(
  trust: WorkspaceTrust,
  ignored: readonly IgnoredSetting[],
  howToTrust: string,
): string | undefined {
  if (trust.trusted) return undefined;
  const present = new Set(trust.files.map((file) => file.name));
  const parts: string[] = [];
  if (ignored.length > 0) {
    parts.push(`${ignored.map((each) => each.key).join(', ')} in .claw/config.json`);
  }
  if (present.has('mcp.json')) parts.push('the MCP servers of .claw/mcp.json (not started)');
  if (present.has('a2a.json')) parts.push('the A2A peers of .claw/a2a.json');
  if (parts.length === 0) return undefined;
  const why = trust.reason === 'changed'
    ? `its settings changed since you trusted it (${trust.changed.map((name) => `.claw/${name}`).join(', ')})`
    : 'it is not trusted';
  return `this workspace's own settings are not used because ${why}: ignored ${joinAnd(parts)}; ` +
    howToTrust;
}

/** What one settings file would do, as lines to show the user before they trust it. */
export interface SettingsFileSummary {
  name: TrustedSettingsFile;
  /** Absolute path. */
  file: string;
  lines: string[];
}

/**
 * What a workspace's settings files would do if trusted (TRUST-3): where the model and the API
 * key would go, the approval and sandbox modes, each MCP server's command line or URL, each A2A
 * peer. Read from the files as written (no `${VAR}` filled); a file that is not valid JSON says
 * so.
 */
export async function describeWorkspaceSettings(
  trust: WorkspaceTrust,
): Promise<SettingsFileSummary[]> {
  return Promise.all(trust.files.map(async ({ name, path: file }) => {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      return { name, file, lines: [`cannot be read as JSON (${(error as Error).message})`] };
    }
    const lines = name === 'config.json' ? configLines(json)
      : name === 'mcp.json' ? mcpLines(json)
        : a2aLines(json);
    return { name, file, lines: lines.length === 0 ? ['(nothing that needs trust)'] : lines };
  }));
}

function configLines(json: unknown): string[] {
  const config = record(json);
  const lines: string[] = [];
  for (const [key, value] of Object.entries(config)) {
    if (key === 'baseUrl') {
      lines.push(`baseUrl ${show(value)}: the model is called there, with your API key`);
    } else if (key === 'approval') {
      const meaning = value === 'allow' ? 'every tool call runs without asking'
        : value === 'deny' ? 'every call that would ask is refused' : 'calls that change things ask you';
      lines.push(`approval ${show(value)}: ${meaning}`);
    } else if (key === 'sandbox') {
      const sandbox = record(value);
      if (sandbox.isolation !== undefined) {
        const meaning = sandbox.isolation === 'off' ? 'bash runs with all your rights, not isolated'
          : sandbox.isolation === 'required' ? 'bash runs only isolated' : 'bash isolated when possible';
        lines.push(`sandbox.isolation ${show(sandbox.isolation)}: ${meaning}`);
      }
      if (sandbox.allowNetwork !== undefined) {
        lines.push(`sandbox.allowNetwork ${show(sandbox.allowNetwork)}: ` +
          (sandbox.allowNetwork === true ? 'bash commands may use the network' : 'no network for bash'));
      }
    } else if (key === 'prices') {
      lines.push(`prices for ${Object.keys(record(value)).join(', ') || 'no model'}: what claw counts as spent`);
    } else if (key === 'systemPromptFile') {
      lines.push(`systemPromptFile ${show(value)}: replaces claw's own system prompt`);
    } else {
      lines.push(`${key} ${show(value)}`);
    }
  }
  return lines;
}

function mcpLines(json: unknown): string[] {
  const servers = record(record(json).mcpServers);
  return Object.entries(servers).map(([name, value]) => {
    const server = record(value);
    const off = server.enabled === false ? ' (disabled)' : '';
    const secrets = Object.keys({ ...record(server.env), ...record(server.headers) });
    const given = secrets.length > 0 ? `; given ${secrets.join(', ')}` : '';
    const risk = server.risk === undefined ? '' : `; its tools' risk ${show(server.risk)}`;
    if (typeof server.command === 'string') {
      const args = Array.isArray(server.args) ? server.args.map(String) : [];
      return `MCP server "${name}"${off} runs: ${clip([server.command, ...args].join(' '))}${given}${risk}`;
    }
    return `MCP server "${name}"${off} at ${show(server.url)}${given}${risk}`;
  });
}

function a2aLines(json: unknown): string[] {
  const peers = record(record(json).peers);
  return Object.entries(peers).map(([name, value]) => {
    const peer = record(value);
    const headers = Object.keys(record(peer.headers));
    const given = headers.length > 0 ? `, sent ${headers.join(', ')}` : '';
    return `A2A peer "${name}" at ${show(peer.url)}${given}`;
  });
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? value as Record<string, unknown>
    : {};
}

function show(value: unknown): string {
  return clip(JSON.stringify(value) ?? String(value));
}

function clip(text: string): string {
  return text.length <= longest ? text : `${text.slice(0, longest - 1)}…`;
}

function joinAnd(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join('; ')} and ${parts.at(-1) ?? ''}`;
}
