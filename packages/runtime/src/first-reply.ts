import type {
  CallOptions,
  ModelRequest,
  ModelResponse,
  Provider,
  StreamEvent,
} from '@claw/core';

/**
 * A provider that tells when its first model call has been answered (its first streamed event,
 * its response, or its failure), so that work nobody needs before then can wait for it instead
 * of delaying the first request (PERF-2). Calls go straight through to the wrapped provider; only
 * a stream started before that first answer is watched.
 */
export class FirstReplyProvider implements Provider {
  readonly name: string;
  readonly stream?: (request: ModelRequest, options?: CallOptions) => AsyncIterable<StreamEvent>;
  /** Resolves once a call has been answered; never rejects. */
  readonly replied: Promise<void>;
  private hasReplied = false;
  private markReplied: () => void = () => undefined;

  constructor(private readonly provider: Provider) {
    this.name = provider.name;
    this.replied = new Promise<void>((resolve) => {
      this.markReplied = resolve;
    });
    const stream = provider.stream?.bind(provider);
    if (stream !== undefined) {
      this.stream = (request, options) =>
        this.hasReplied ? stream(request, options) : this.watch(stream(request, options));
    }
  }

  async generate(request: ModelRequest, options?: CallOptions): Promise<ModelResponse> {
    try {
      return await this.provider.generate(request, options);
    } finally {
      this.reply();
    }
  }

  private async *watch(events: AsyncIterable<StreamEvent>): AsyncIterable<StreamEvent> {
    try {
      for await (const event of events) {
        this.reply();
        yield event;
      }
    } finally {
      this.reply();
    }
  }

  private reply(): void {
    if (this.hasReplied) return;
    this.hasReplied = true;
    this.markReplied();
  }
}
