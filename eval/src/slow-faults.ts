import { sleep, type CallOptions, type ModelRequest, type Provider, type StreamEvent } from '@claw/core';
import type { HarnessFaults } from './case.js';

/** A provider that seeds the timing faults of a run, and the moment its run begins. */
export interface SlowProvider {
  provider: Provider;
  /** Called as the task starts: the slowed machine's first stretch is measured from here. */
  begin(): void;
}

/** CPU time (user and system) the process has used, in milliseconds. */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * The timing faults (`slowTurnMs`, `slowMachine`): each model call's end (its `completed` event,
 * or a generated reply) is held back before the engine gets it. Held at the end, after the first
 * token, so that they are the engine's time (overhead) and not the model's (ttfb). `provider`
 * itself when neither is set. `cpuMs` reads the CPU time used (tests: a clock of their own).
 */
export function withSlowTurns(
  provider: Provider,
  faults: HarnessFaults,
  options: { cpuMs?: () => number } = {},
): SlowProvider {
  const turnMs = faults.slowTurnMs ?? 0;
  const factor = faults.slowMachine ?? 1;
  if (turnMs <= 0 && factor <= 1) return { provider, begin: () => undefined };
  const cpu = options.cpuMs ?? cpuMs;
  let mark = cpu();
  const hold = async (signal: AbortSignal | undefined): Promise<void> => {
    // A machine `factor` times slower would have taken that much longer over the CPU work done
    // since the last call ended; the wait itself uses none, so the next stretch starts after it.
    const stretched = (factor - 1) * Math.max(0, cpu() - mark);
    await sleep(turnMs + stretched, signal);
    mark = cpu();
  };
  const stream = provider.stream?.bind(provider);
  return {
    begin: () => {
      mark = cpu();
    },
    provider: {
      name: provider.name,
      generate: async (request, callOptions) => {
        const response = await provider.generate(request, callOptions);
        await hold(callOptions?.signal);
        return response;
      },
      ...(stream === undefined
        ? {}
        : {
            stream: async function* (
              request: ModelRequest,
              callOptions?: CallOptions,
            ): AsyncIterable<StreamEvent> {
              for await (const event of stream(request, callOptions)) {
                if (event.type === 'completed') await hold(callOptions?.signal);
                yield event;
              }
            },
          }),
    },
  };
}
