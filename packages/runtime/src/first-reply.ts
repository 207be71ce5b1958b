import type {
  CallOptions,
  ModelRequest,
  ModelResponse,
  Provider,
  StreamEvent,
} from '@claw/core';

/**
 * A provider that tells when its first model call has been answered (its first streamed event,
 * its response, or its failure), and whether it was answered or failed, so that work nobody needs
 * before then can wait for it instead of delaying the first request (PERF-2). Calls go straight
 * through to the wrapped provider; only a stream started before that first answer is watched.
 */
export class FirstReplyProvider implements Provider {
  readonly name: string;
  readonly stream?: (request: ModelRequest, options?: CallOptions) => AsyncIterable<StreamEvent>;
  /**
   * Resolves once a call has been answered: true with an event or a response, false when it
   * failed first. Never rejects.
   */
  readonly replied: Promise<boolean>;
  private hasReplied = false;
  private markReplied: (answered: boolean) => void = () => undefined;

  constructor(private readonly provider: Provider) {
    this.name = provider.name;
    this.replied = new Promise<boolean>((resolve) => {
      this.markReplied = resolve;
    });
    const stream = provider.stream?.bind(provider);
    if (stream !== undefined) {
      this.stream = (request, options) =>
        this.hasReplied ? stream(request, options) : this.watch(stream(request, options));
    }
  }

  async generate(request: ModelRequest, options?: CallOptions): Promise<ModelResponse> {
    let answered = false;
    try {
      const response = await this.provider.generate(request, options);
      answered = true;
      return response;
    } finally {
      this.reply(answered);
    }
  }

  private async *watch(events: AsyncIterable<StreamEvent>): AsyncIterable<StreamEvent> {
    let answered = false;
    try {
      for await (const event of events) {
        this.reply(true);
        yield event;
      }
      answered = true;
    } finally {
      this.reply(answered);
    }
  }

  private reply(answered: boolean): void {
    if (this.hasReplied) return;
    this.hasReplied = true;
    this.markReplied(answered);
  }
}
