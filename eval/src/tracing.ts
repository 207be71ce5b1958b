import {
  ROOT_CONTEXT,
  SpanStatusCode,
  context,
  createContextKey,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { EvalError } from './errors.js';

/** The name of the span the harness opens around each run (OBS-1). */
export const evalSpanName = 'Eval';

type AttributeItem = string | number | boolean;
type AttributeValue = AttributeItem | AttributeItem[];

/** A finished span, in plain data (what results.json keeps). */
export interface SpanRecord {
  id: string;
  parentId?: string;
  name: string;
  /** Milliseconds on the run's clock (the same clock as the harness's own records). */
  startMs: number;
  endMs: number;
  durationMs: number;
  attributes: Record<string, AttributeValue>;
  status: 'unset' | 'ok' | 'error';
  statusMessage?: string;
}

const probeKey = createContextKey('claw-eval probe');

/**
 * Makes sure the active context follows async calls, so the engine's "Agent.Run" span (which
 * takes the active context as its parent) lands under the harness's "Eval" span. Registers an
 * AsyncLocalStorage context manager unless one that works is already registered.
 *
 * @throws EvalError `harness_failed` when the registered context manager does not propagate.
 */
export function ensureContextPropagation(): void {
  const probe = ROOT_CONTEXT.setValue(probeKey, true);
  const works = (): boolean =>
    context.with(probe, () => context.active().getValue(probeKey) === true);
  if (works()) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  if (!works()) {
    throw new EvalError(
      'claw-eval: the OpenTelemetry context manager registered in this process does not carry ' +
      'the active span; spans cannot be linked to their Eval span. Register an ' +
      'AsyncLocalStorageContextManager (or none) before running claw-eval',
      { code: 'harness_failed' },
    );
  }
}

/**
 * Notes when each span starts and ends on the performance clock. The SDK stamps a span's start
 * with `Date.now()` (whole milliseconds, and the wall clock may drift from the performance
 * clock), so start times from it cannot be compared with the harness's own records to better than
 * a millisecond or two; these can. Durations are the SDK's own.
 */
class SpanClock implements SpanProcessor {
  readonly starts = new Map<string, number>();
  readonly ends = new Map<string, number>();

  onStart(span: Span): void {
    this.starts.set(span.spanContext().spanId, performance.now());
  }

  onEnd(span: ReadableSpan): void {
    this.ends.set(span.spanContext().spanId, performance.now());
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}

/** A tracer whose spans stay in memory for one run (EVAL-4). */
export class InMemoryTracing {
  readonly tracer: Tracer;
  private readonly exporter = new InMemorySpanExporter();
  private readonly clock = new SpanClock();
  private readonly provider: BasicTracerProvider;

  constructor() {
    this.provider = new BasicTracerProvider({
      spanProcessors: [this.clock, new SimpleSpanProcessor(this.exporter)],
    });
    this.tracer = this.provider.getTracer('@claw/eval');
  }

  /**
   * The finished spans, oldest start first, with times in milliseconds after `origin` (a
   * `performance.now()` reading: the harness's clock).
   */
  spans(origin: number): SpanRecord[] {
    return toSpanRecords(this.exporter.getFinishedSpans(), {
      origin,
      starts: this.clock.starts,
      ends: this.clock.ends,
    });
  }

  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}

const statusNames: Record<SpanStatusCode, SpanRecord['status']> = {
  [SpanStatusCode.UNSET]: 'unset',
  [SpanStatusCode.OK]: 'ok',
  [SpanStatusCode.ERROR]: 'error',
};

function hrMs(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/**
 * Plain records of finished spans. Times are milliseconds after `clock.origin` on the performance
 * clock when the span's readings are in `clock`, else after the earliest start (SDK times).
 */
export function toSpanRecords(
  spans: readonly ReadableSpan[],
  clock?: {
    origin: number;
    starts: ReadonlyMap<string, number>;
    ends: ReadonlyMap<string, number>;
  },
): SpanRecord[] {
  if (spans.length === 0) return [];
  const earliest = Math.min(...spans.map((span) => hrMs(span.startTime)));
  const round = (value: number): number => Math.round(value * 1000) / 1000;
  const timesOf = (span: ReadableSpan): [number, number] => {
    const id = span.spanContext().spanId;
    const start = clock?.starts.get(id);
    const end = clock?.ends.get(id);
    if (clock !== undefined && start !== undefined && end !== undefined) {
      return [start - clock.origin, end - clock.origin];
    }
    const sdkStart = hrMs(span.startTime) - earliest;
    return [sdkStart, sdkStart + hrMs(span.duration)];
  };
  return [...spans]
    .map((span) => ({ span, times: timesOf(span) }))
    .sort((a, b) => a.times[0] - b.times[0])
    .map(({ span, times }) => {
      const startMs = round(times[0]);
      const endMs = round(times[1]);
      const attributes: Record<string, AttributeValue> = {};
      for (const [key, value] of Object.entries(span.attributes)) {
        if (value === undefined || value === null) continue;
        attributes[key] = Array.isArray(value)
          ? value.filter((item): item is AttributeItem => item !== null && item !== undefined)
          : value;
      }
      const parentId = span.parentSpanContext?.spanId;
      return {
        id: span.spanContext().spanId,
        ...(parentId === undefined ? {} : { parentId }),
        name: span.name,
        startMs,
        endMs,
        durationMs: round(endMs - startMs),
        attributes,
        status: statusNames[span.status.code],
        ...(span.status.message === undefined || span.status.message === ''
          ? {}
          : { statusMessage: span.status.message }),
      };
    });
}
