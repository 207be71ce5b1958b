import {
  AbortRace,
  ClawError,
  abortReason,
  errorMessage,
  raceAbort,
  throwIfAborted,
  type ModelRequest,
  type ModelResponse,
  type ModelRetry,
  type Provider,
} from '@claw/core';
import type { SafeReporter } from './safe-reporter.js';
import { StreamPump } from './stream-pump.js';

export interface ModelCallOptions {
  provider: Provider;
  request: ModelRequest;
  signal: AbortSignal;
  reporter: SafeReporter;
  /**
   * Called once, when the first output arrives (a text, reasoning or tool-call delta, or the
   * reply).
   */
  onFirstOutput: () => void;
}

/**
 * One model call ("Thinking", ENG-6): streams when the provider can, else generates.
 *
 * The stream is pulled as fast as the provider produces it (a `StreamPump`), while its text
 * and reasoning deltas (REAL-4) go to the reporter in order at the reporter's own pace, so a
 * slow reporter never counts against the call's timeouts (RT-3, PRV-5). The reply is returned
 * once every delta before it was reported. A stream error, too, comes after the deltas that
 * arrived before it, so the reporter has shown everything the model said when the call fails.
 *
 * Leaving by any path (reply, error, reporter failure, abort) ends the stream's iteration: no
 * producer keeps running. A reporter failure stops at once, with no further delta reported
 * (ENG-7). An abort rejects with the signal's reason at once, even while the reporter is busy.
 */
export async function callModel(options: ModelCallOptions): Promise<ModelResponse> {
  const { provider, request, signal, reporter } = options;
  let firstOutput = false;
  const markOutput = (): void => {
    if (firstOutput) return;
    firstOutput = true;
    options.onFirstOutput();
  };
  // A provider that retries says so: the reporter hears of each retry (a failing or stalled
  // model is otherwise silence for as long as the attempts take).
  const onRetry = (retry: ModelRetry): void =>
    reporter.modelRetry({
      attempt: retry.attempt,
      attempts: retry.attempts,
      delayMs: retry.delayMs,
      reason: errorMessage(retry.error),
    });
  const stream = provider.stream?.bind(provider);
  if (stream === undefined) {
    const response = await provider.generate(request, { signal, onRetry });
    markOutput();
    // A reply that was not streamed tells its reasoning in one piece, before it is returned.
    const reasoning = response.message.reasoning;
    if (reasoning !== undefined && reasoning !== '') {
      await raceAbort(reporter.thinkingDelta(reasoning), signal);
    }
    return response;
  }
  const pump = new StreamPump({
    open: (streamSignal) => stream(request, { signal: streamSignal, onRetry }),
    signal,
    onEvent: markOutput,
  });
  // One abort listener for the whole stream, not one per chunk and delta.
  const races = new AbortRace(signal);
  try {
    for (;;) {
      const item = await races.race(pump.take());
      switch (item.type) {
        case 'text_delta':
          throwIfAborted(signal);
          await races.race(reporter.textDelta(item.delta));
          break;
        case 'reasoning_delta':
          throwIfAborted(signal);
          await races.race(reporter.thinkingDelta(item.delta));
          break;
        case 'completed':
          return item.response;
        case 'failed':
          throw signal.aborted ? abortReason(signal) : item.error;
        case 'ended':
          if (signal.aborted) throw abortReason(signal);
          throw new ClawError(
            'the model stream ended without a final message; try again, and check the ' +
            'provider if it keeps happening',
            { code: 'model_stream_incomplete' },
          );
      }
    }
  } finally {
    races.dispose();
    await pump.close();
  }
}
