import {
  ClawError,
  abortReason,
  type ModelRequest,
  type ModelResponse,
  type Provider,
} from '@claw/core';
import type { SafeReporter } from './safe-reporter.js';

export interface ModelCallOptions {
  provider: Provider;
  request: ModelRequest;
  signal: AbortSignal;
  reporter: SafeReporter;
  /** Called once, at the first sign of output (a text or tool-call delta, or the reply). */
  onFirstOutput: () => void;
}

/**
 * One model call ("Thinking", ENG-6): streams when the provider can, forwarding text deltas to the
 * reporter as they arrive, else generates. Leaving by any path (reply, error, reporter failure)
 * ends the stream's iteration, which closes the request: no producer keeps running.
 */
export async function callModel(options: ModelCallOptions): Promise<ModelResponse> {
  const { provider, request, signal, reporter } = options;
  let firstOutput = false;
  const markOutput = (): void => {
    if (firstOutput) return;
    firstOutput = true;
    options.onFirstOutput();
  };
  if (provider.stream === undefined) {
    const response = await provider.generate(request, { signal });
    markOutput();
    return response;
  }
  for await (const event of provider.stream(request, { signal })) {
    switch (event.type) {
      case 'text_delta':
        markOutput();
        await reporter.textDelta(event.delta);
        break;
      case 'tool_call_delta':
        markOutput();
        break;
      case 'completed':
        markOutput();
        return event.response;
    }
  }
  if (signal.aborted) throw abortReason(signal);
  throw new ClawError('the model stream ended without a final message', {
    code: 'model_stream_incomplete',
  });
}
