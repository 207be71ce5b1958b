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
 * `delegate_agent` for each trusted workspace that has `.claw/a2a.json` (its peers; an empty
 * `peers` object is enough to allow delegation by URL). `@claw/a2a` and the A2A SDK are loaded only
 * then, so claw starts as fast without A2A as before (PERF-2). The file is read again on every
 * call, so a peer added while claw runs can be used at once.
 */
export class WorkspaceA2a {
  private readonly workspaces = new PerWorkspace((root) => this.make(root));

  /**
   * @param trusted whether a workspace's settings files may be used (TRUST-2), asked again on
   *   every call (the file is read again then too): an untrusted `.claw/a2a.json` is not read, so
   *   no `${VAR}` is filled from the environment for its peers.
   */
  constructor(
    private readonly options: A2aOptions,
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly trusted: (root: string) => Promise<boolean>,
  ) {}

  /**
   * The workspace's A2A tools; `undefined` without `.claw/a2a.json`, or when the workspace is not
   * trusted now (a file changed since it was trusted is not offered to the next session).
   */
  async tools(workDir: string): Promise<ToolSource | undefined> {
    if (this.options.enabled === false) return undefined;
    const tools = await this.workspaces.get(workDir);
    return tools !== undefined && (await this.trusted(workDir)) ? tools : undefined;
  }

  private async make(root: string): Promise<ToolSource | undefined> {
    // The file @claw/a2a reads (its `a2aConfigFile`).
    const file = path.join(root, '.claw', 'a2a.json');
    if (!(await access(file).then(() => true, () => false))) return undefined;
    if (!(await this.trusted(root))) return undefined;
    const { A2aConfigError, createDelegateTool, loadA2aConfig } = await import('@claw/a2a');
    const { env } = this;
    return new ToolRegistry([
      createDelegateTool({
        // A file changed since it was trusted is not used (nor its peers' `${VAR}`s filled), and
        // delegation stops until the user trusts it again: no peer, no URL.
        config: async (workDir, signal) => {
          if (await this.trusted(workDir)) return loadA2aConfig({ workDir, env, signal });
          throw new A2aConfigError(
            `${file} changed since this workspace was trusted, so delegate_agent cannot be used ` +
            'until the user trusts it again (claw trust)',
            { file },
          );
        },
        ...(this.options.fetch === undefined ? {} : { fetch: this.options.fetch }),
      }),
    ]);
  }
}
