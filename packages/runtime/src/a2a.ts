import { access } from 'node:fs/promises';
import path from 'node:path';
import { ToolRegistry, type ToolSource } from '@claw/engine';
import { PerWorkspace } from './per-workspace.js';

/** How a factory offers delegation to remote agents (`delegate_agent`, A2A-1). */
export interface A2aOptions {
  /** False: no `delegate_agent`, whatever the workspaces configure. Default true. */
  enabled?: boolean;
  /** For tests and proxies; default the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * `delegate_agent` for each workspace that has `.claw/a2a.json` (its peers; an empty `peers`
 * object is enough to allow delegation by URL). `@claw/a2a` and the A2A SDK are loaded only
 * then, so claw starts as fast without A2A as before (PERF-2). The file is read again on every
 * call, so a peer added while claw runs can be used at once.
 */
export class WorkspaceA2a {
  private readonly workspaces = new PerWorkspace((root) => this.make(root));

  constructor(
    private readonly options: A2aOptions,
    private readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  /** The workspace's A2A tools; `undefined` without `.claw/a2a.json`. */
  async tools(workDir: string): Promise<ToolSource | undefined> {
    if (this.options.enabled === false) return undefined;
    return this.workspaces.get(workDir);
  }

  private async make(root: string): Promise<ToolSource | undefined> {
    // The file @claw/a2a reads (its `a2aConfigFile`).
    const file = path.join(root, '.claw', 'a2a.json');
    if (!(await access(file).then(() => true, () => false))) return undefined;
    const { createDelegateTool, loadA2aConfig } = await import('@claw/a2a');
    const { env } = this;
    return new ToolRegistry([
      createDelegateTool({
        config: (workDir, signal) => loadA2aConfig({ workDir, env, signal }),
        ...(this.options.fetch === undefined ? {} : { fetch: this.options.fetch }),
      }),
    ]);
  }
}
