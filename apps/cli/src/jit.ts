import v8 from 'node:v8';

/** The Node.js major version on which {@link tuneJitForTurns} is measured and applied. */
export const jitTunedNodeMajor = 20;

export interface JitTuningOptions {
  /** Default: this process's (`process.versions.node`). */
  nodeVersion?: string;
}

/**
 * Readies V8 for the turns of a task (PERF-1); the CLI calls it once a task's runtime is up,
 * before its first model request. Returns whether it changed anything.
 *
 * A turn runs the same code each time: the model client's request and stream, the engine, the
 * tools, the session's records. V8 interprets a function until it has run a good while and only
 * then compiles it to baseline machine code (Sparkplug), so most of that code stays interpreted
 * through the first dozens of turns of a task. `--always-sparkplug` compiles each function to
 * baseline code at its first call instead. Measured with `bench:cli` against the same build
 * without it, run by run: 8–13% off the time a turn costs, and 1–11 ms more before the first
 * request (the compiling of the first turn's code). Start-up and opening the session, which run
 * before this call, are compiled as before.
 *
 * Node's built-in modules carry V8 code caches, which V8 no longer accepts once a flag has
 * changed: a built-in module loaded after this call would be compiled from its source. So the
 * web `Response` class is touched first, which loads what the model client's requests use
 * (`fetch`'s undici with its http, tls and web streams modules); without it the first request
 * came 15–25 ms later.
 *
 * The flag changes when V8 compiles to baseline code, not what the code does; V8 runs its own
 * test suites with it on. Changing V8 flags in a running process is only safe for flags read as
 * code is compiled, as this one is. Applied on Node 20 only, where it is measured; other
 * versions keep V8's defaults.
 */
export function tuneJitForTurns(options: JitTuningOptions = {}): boolean {
  const version = options.nodeVersion ?? process.versions.node;
  if (Number.parseInt(version, 10) !== jitTunedNodeMajor) return false;
  // `node --jitless`: no baseline compiler to turn on, and no WebAssembly, without which loading
  // undici (its HTTP parser is WebAssembly) would end the process.
  if (typeof (globalThis as { WebAssembly?: unknown }).WebAssembly !== 'object') return false;
  void globalThis.Response;
  v8.setFlagsFromString('--always-sparkplug');
  return true;
}
