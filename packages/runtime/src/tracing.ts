import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/**
 * Writes spans to a file as OTLP JSON (OBS-3): one `ExportTraceServiceRequest` per line, in the
 * encoding of the official OTLP/HTTP JSON exporter, so any OTLP tooling can read it. Used behind a
 * `BatchSpanProcessor`, so writing happens in batches, off the run's hot path.
 */
export class OtlpJsonFileExporter implements SpanExporter {
  readonly file: string;
  private stream: WriteStream | undefined;
  private opening: Promise<WriteStream> | undefined;

  constructor(options: { directory: string; fileName?: string }) {
    const stamp = new Date().toISOString().replaceAll(':', '-');
    this.file = path.join(options.directory, options.fileName ?? `${stamp}-${process.pid}.otlp.jsonl`);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const bytes = JsonTraceSerializer.serializeRequest(spans);
    if (bytes === undefined) {
      resultCallback({ code: 1, error: new Error('spans could not be serialised') });
      return;
    }
    this.open()
      .then((stream) => {
        stream.write(Buffer.concat([Buffer.from(bytes), Buffer.from('\n')]), (error) => {
          resultCallback(error === null || error === undefined ? { code: 0 } : { code: 1, error });
        });
      })
      .catch((error: unknown) => {
        const failure = error instanceof Error ? error : new Error(String(error));
        resultCallback({ code: 1, error: failure });
      });
  }

  async forceFlush(): Promise<void> {
    const stream = this.stream;
    if (stream === undefined) return;
    await new Promise<void>((resolve) => {
      if (stream.writableNeedDrain) stream.once('drain', () => resolve());
      else resolve();
    });
  }

  async shutdown(): Promise<void> {
    const stream = this.stream ?? (this.opening === undefined ? undefined : await this.opening);
    this.stream = undefined;
    this.opening = undefined;
    if (stream === undefined) return;
    await new Promise<void>((resolve) => stream.end(() => resolve()));
  }

  private open(): Promise<WriteStream> {
    if (this.stream !== undefined) return Promise.resolve(this.stream);
    this.opening ??= mkdir(path.dirname(this.file), { recursive: true }).then(() => {
      this.stream = createWriteStream(this.file, { flags: 'a' });
      return this.stream;
    });
    return this.opening;
  }
}

export interface Tracing {
  tracer: Tracer;
  /** The trace file. */
  file: string;
  /** Exports what is buffered and closes the file (call on exit). */
  shutdown(): Promise<void>;
}

/**
 * A tracer whose spans go to `<workDir>/.claw/traces/` as OTLP JSON (OBS-3), batched and written
 * asynchronously. It is not registered globally: pass `tracer` to the engine.
 */
export function createFileTracing(options: { workDir: string; serviceName?: string }): Tracing {
  const exporter = new OtlpJsonFileExporter({
    directory: path.join(options.workDir, '.claw', 'traces'),
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName ?? 'claw' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer('@claw/engine'),
    file: exporter.file,
    shutdown: () => provider.shutdown(),
  };
}
