/**
 * The one error root of claw (CORE-5). Every error a claw package throws is a `ClawError` (or a
 * subclass) with a stable machine-readable `code`; the error that caused it is kept as `cause`.
 */
export class ClawError extends Error {
  /** Stable identifier, e.g. `"http_error"`, `"config_invalid"`. Safe to switch on. */
  readonly code: string;

  constructor(message: string, options: { code: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
  }
}

// Any class, including ones with protected or varied constructors.
type ErrorClass<T> = abstract new (...args: never[]) => T;

const maxCauseDepth = 32;

/**
 * Walks `error` and its `cause` chain (and the members of an `AggregateError`) and returns the
 * first error that is an instance of `type`, like Go's `errors.As`. Returns `undefined` when none
 * is. Cycles in the chain are tolerated.
 */
export function findError<T>(error: unknown, type: ErrorClass<T>): T | undefined {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < maxCauseDepth) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (current instanceof type) return current;
    if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
    if (current instanceof Error) pending.push(current.cause);
  }
  return undefined;
}

/** True when `error` or anything in its cause chain is a `ClawError` with this `code`. */
export function hasErrorCode(error: unknown, code: string): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current) && seen.size < maxCauseDepth) {
    seen.add(current);
    if (current instanceof ClawError && current.code === code) return true;
    current = current.cause;
  }
  return false;
}

/** The message of anything thrown, for reports and logs. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/**
 * The reason an aborted signal carries, as an `Error`. `AbortController.abort()` without a reason
 * already yields a `DOMException` named `AbortError`; a non-error reason is wrapped so that callers
 * can always rely on `instanceof Error`.
 */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new ClawError(`operation aborted: ${errorMessage(reason)}`, {
    code: 'aborted',
    cause: reason,
  });
}

/** Throws the signal's reason when it is aborted (the `signal.throwIfAborted()` of claw). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortReason(signal);
}
