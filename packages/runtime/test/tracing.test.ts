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
    // The 200th end() handed the batch over; the exporter encodes it later (see the next test).
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

  it('export only takes the spans: it reads none of them before it returns', async () => {
    const exporter = new OtlpJsonFileExporter({ directory, fileName: 'one.jsonl' });
    const provider = new BasicTracerProvider();
    const span = provider.getTracer('test').startSpan('watched', { attributes: { a: 1 } });
    span.end();
    const reads: string[] = [];
    // The serialiser reads the span's fields; a proxy tells when that happens.
    const watched = new Proxy(span, {
      get: (target, key) => {
        if (typeof key === 'string') reads.push(key);
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const results: number[] = [];
    exporter.export([watched as never], (result) => results.push(result.code));
    expect(reads).toEqual([]);
    await exporter.forceFlush();
    expect(reads).toContain('attributes');
    expect(results).toEqual([0]);
    const line = (await readFile(join(directory, 'one.jsonl'), 'utf8')).trim();
    expect(line).toContain('watched');
    await exporter.shutdown();
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
