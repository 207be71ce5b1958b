import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OtlpJsonFileExporter } from '../src/index.js';

interface OtlpRequest {
  resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string }> }> }>;
}

describe('OTLP JSON file exporter (OBS-3)', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'claw-traces-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('takes a full batch inside span.end() without encoding it there, then writes it 64 spans to a line', async () => {
    const exporter = new OtlpJsonFileExporter({ directory, fileName: 'spans.jsonl' });
    const provider = new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(exporter, { maxExportBatchSize: 200, scheduledDelayMillis: 60_000 })],
    });
    const tracer = provider.getTracer('test');
    for (let index = 0; index < 200; index += 1) tracer.startSpan(`span ${index}`).end();
    // The 200th end() handed the batch over: nothing is encoded or written yet.
    expect(await readdir(directory)).toEqual([]);
    // The processor's flush does not wait for an export under way; the exporter's does.
    await provider.forceFlush();
    await exporter.forceFlush();
    const lines = (await readFile(join(directory, 'spans.jsonl'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    const names = lines.flatMap((line) =>
      (JSON.parse(line) as OtlpRequest).resourceSpans.flatMap((resource) =>
        resource.scopeSpans.flatMap((scope) => scope.spans.map((span) => span.name)),
      ),
    );
    expect(names).toEqual(Array.from({ length: 200 }, (_, index) => `span ${index}`));
    await provider.shutdown();
  });

  it('reports a failed write as a failed export, and shutdown still ends', async () => {
    // A directory where the file should be: opening it for append fails.
    const exporter = new OtlpJsonFileExporter({ directory, fileName: '.' });
    const results: number[] = [];
    const provider = new BasicTracerProvider();
    const tracer = provider.getTracer('test');
    const span = tracer.startSpan('one');
    span.end();
    await new Promise<void>((resolve) => {
      exporter.export([span as never], (result) => {
        results.push(result.code);
        resolve();
      });
    });
    expect(results).toEqual([1]);
    await exporter.shutdown();
  });
});
