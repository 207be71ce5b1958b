import { defineTool, errorMessage, type Tool, type ToolResult } from '@claw/core';
import { z } from 'zod';
import type { A2aConfig, A2aPeer } from './config.js';
import { sendEnvelopeMessage } from './envelope.js';
import { A2aConfigError } from './errors.js';
import { delegateTask, formatReport } from './outbound.js';

/** The tool's name, as the model sees it (A2A-1). */
export const delegateToolName = 'delegate_agent';

const argumentsSchema = z.strictObject({
  message: z.string().min(1).describe('The whole task for the remote agent, in plain words.'),
  url: z.string().min(1).optional()
    .describe('The agent\'s base URL, or the URL of its agent card (ending in .json).'),
  peer: z.string().min(1).optional()
    .describe('The name of a peer configured in .claw/a2a.json (instead of url).'),
});

export interface DelegateToolOptions {
  /** The workspace's A2A configuration (`.claw/a2a.json`); undefined when it has none. */
  config: (workDir: string, signal: AbortSignal) => Promise<A2aConfig | undefined>;
  fetch?: typeof fetch;
}

/**
 * `delegate_agent {message, url | peer}` (A2A-1), risk `dangerous`: the whole task goes to a
 * remote agent, which works on it alone and returns a report (its final text and artifacts,
 * never its tool trace). A `peer` is looked up in the workspace's `.claw/a2a.json` (its URL,
 * headers and protocol); neither `url` nor `peer` is an error Observation. Status updates go to
 * the tool's progress callback; aborting the call cancels the remote task. The call runs as a
 * tool, so it counts against the run's tool time budget.
 */
type DelegateArguments = z.output<typeof argumentsSchema>;

export function createDelegateTool(options: DelegateToolOptions): Tool<DelegateArguments> {
  return defineTool({
    name: delegateToolName,
    description:
      'Hand a whole task to another agent (A2A) and get its final report back. Give "message" ' +
      '(the complete task: the remote agent sees nothing of this conversation) and either "url" ' +
      '(the agent\'s address) or "peer" (a name from .claw/a2a.json).',
    risk: 'dangerous',
    schema: argumentsSchema,
    execute: async (args, context): Promise<ToolResult> => {
      let target: Pick<A2aPeer, 'url' | 'headers' | 'protocol'>;
      try {
        const config = await options.config(context.workDir, context.signal);
        const resolved = resolveTarget(args, config);
        if (typeof resolved === 'string') return { content: resolved, isError: true };
        target = resolved;
      } catch (error) {
        if (error instanceof A2aConfigError) return { content: error.message, isError: true };
        throw error;
      }
      if (target.protocol === 'claw') {
        const result = await sendEnvelopeMessage({
          url: target.url,
          message: args.message,
          headers: target.headers,
          signal: context.signal,
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        });
        return {
          content: result.report === '' ? `The claw peer ended the task (${result.status}) without a report.` : result.report,
          isError: result.status !== 'completed',
        };
      }
      const report = await delegateTask({
        url: target.url,
        message: args.message,
        headers: target.headers,
        signal: context.signal,
        ...(context.onProgress === undefined ? {} : { onProgress: context.onProgress }),
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      });
      return formatReport(report);
    },
  });
}

function resolveTarget(
  args: DelegateArguments,
  config: A2aConfig | undefined,
): Pick<A2aPeer, 'url' | 'headers' | 'protocol'> | string {
  const known = config?.peers.map((peer) => peer.name) ?? [];
  const knownText = known.length === 0
    ? 'no peers are configured (add them to .claw/a2a.json)'
    : `the configured peers are ${known.join(', ')}`;
  if (args.url !== undefined && args.peer !== undefined) {
    return 'give either "url" or "peer", not both';
  }
  if (args.peer !== undefined) {
    const peer = config?.peers.find((candidate) => candidate.name === args.peer);
    if (peer === undefined) return `unknown peer ${JSON.stringify(args.peer)}: ${knownText}`;
    return peer;
  }
  if (args.url !== undefined) {
    try {
      const parsed = new URL(args.url);
      if (!['http:', 'https:'].includes(parsed.protocol)) throw new Error('not http');
    } catch (error) {
      return `"url" must be an http:// or https:// address, got ${JSON.stringify(args.url)} (${errorMessage(error)})`;
    }
    return { url: args.url, headers: {}, protocol: 'a2a' };
  }
  return `delegate_agent needs "url" (the agent's address) or "peer" (a configured name); ${knownText}`;
}
