import { createWriteStream, type WriteStream } from 'node:fs';
import fs, { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SerialQueue, prepareStateFolder, stateFolderName } from '@claw/core';
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

/** Spans serialised per slice: a bounded pause of the event loop per step of a large export. */
const sliceSpans = 64;

/**
 * Writes spans to a file as OTLP JSON (OBS-3): one `ExportTraceServiceRequest` per line, in the
 * encoding of the official OTLP/HTTP JSON exporter, so any OTLP tooling can read it. Used behind a
 * `BatchSpanProcessor`, which calls `export` from inside `span.end()` once its buffer holds a full
 * batch (512 spans): so `export` only takes the spans and returns, and they are serialised and
 * written later, 64 to a line, one slice per turn of the event loop. The run's hot path never
 * waits for a whole batch to be encoded.
 */
export class OtlpJsonFileExporter implements SpanExporter {
  readonly file: string;
  private stream: WriteStream | undefined;
  private opening: Promise<WriteStream> | undefined;
  /** The exports under way, in order. */
  private readonly writing = new SerialQueue();
  private readonly stateFolder: string | undefined;

  /**
   * @param options.stateFolder the workspace's state folder `directory` is in, made with its
   *   `.gitignore` before the first trace file (`prepareStateFolder`).
   */
  constructor(options: { directory: string; fileName?: string; stateFolder?: string }) {
    const stamp = new Date().toISOString().replaceAll(':', '-');
    this.file = path.join(options.directory, options.fileName ?? `${stamp}-${process.pid}.otlp.jsonl`);
    this.stateFolder = options.stateFolder;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const batch = spans.slice();
    void this.writing.run(() =>
      this.writeSlices(batch).then(
        () => resultCallback({ code: 0 }),
        (error: unknown) => {
          const failure = error instanceof Error ? error : new Error(String(error));
          resultCallback({ code: 1, error: failure });
        },
      ),
    );
  }

  async forceFlush(): Promise<void> {
    await this.writing.idle();
    const stream = this.stream;
    if (stream === undefined) return;
    await new Promise<void>((resolve) => {
      if (stream.writableNeedDrain) stream.once('drain', () => resolve());
      else resolve();
    });
  }

  async shutdown(): Promise<void> {
    await this.writing.idle();
    const stream = this.stream ?? (this.opening === undefined ? undefined : await this.opening);
    this.stream = undefined;
    this.opening = undefined;
    if (stream === undefined) return;
    await new Promise<void>((resolve) => stream.end(() => resolve()));
  }

  private async writeSlices(spans: ReadableSpan[]): Promise<void> {
    const stream = await this.open();
    for (let start = 0; start < spans.length; start += sliceSpans) {
      // Out of the caller's tick (a span's end), and the loop turns between slices.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const bytes = JsonTraceSerializer.serializeRequest(spans.slice(start, start + sliceSpans));
      if (bytes === undefined) throw new Error('spans could not be serialised');
      await new Promise<void>((resolve, reject) => {
        stream.write(Buffer.concat([Buffer.from(bytes), Buffer.from('\n')]), (error) => {
          if (error === null || error === undefined) resolve();
          else reject(error);
        });
      });
    }
  }

  private open(): Promise<WriteStream> {
    if (this.stream !== undefined) return Promise.resolve(this.stream);
    this.opening ??= this.makeFolder().then(() => {
      const stream = createWriteStream(this.file, { flags: 'a' });
      // A write's error reaches its callback (and so the export's result); not a crash.
      stream.on('error', () => undefined);
      this.stream = stream;
      return stream;
    });
    return this.opening;
  }

  private async makeFolder(): Promise<void> {
    if (this.stateFolder !== undefined) await prepareStateFolder(fs, this.stateFolder);
    await mkdir(path.dirname(this.file), { recursive: true });
  }
}

/** What `createFileTracing` returns: the tracer to give the engine and the file its spans go to. */
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
  const stateFolder = path.join(options.workDir, stateFolderName);
  const exporter = new OtlpJsonFileExporter({
    directory: path.join(stateFolder, 'traces'),
    stateFolder,
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
