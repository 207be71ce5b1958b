/**
 * The one error root of claw (CORE-5). Every error a claw package throws is a `ClawError` (or a
 * subclass) with a stable machine-readable `code`; the error that caused it is kept as `cause`.
 *
 * `userError` marks errors the user fixes by changing how claw is run (a bad flag, a bad config
 * file, a session held by another process): apps report them as usage or configuration errors
 * (`claw` exits 2) instead of as a failed task. The code that throws decides; nobody keeps a list.
 */
export class ClawError extends Error {
  /** Stable identifier, e.g. `"http_error"`, `"config_invalid"`. Safe to switch on. */
  readonly code: string;
  /** True when the user fixes it by changing the command line, configuration or environment. */
  readonly userError: boolean;

  constructor(message: string, options: { code: string; cause?: unknown; userError?: boolean }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.userError = options.userError ?? false;
  }
}

/**
 * A usage or configuration error (`userError` is always true): the message says what is wrong and
 * what to change. Areas with their own error classes set `userError` on those instead.
 */
export class ClawUserError extends ClawError {
  constructor(message: string, options: { code: string; cause?: unknown }) {
    super(message, { ...options, userError: true });
  }
}

/** True when `error` is a `ClawError` the user fixes by changing how claw is run. */
export function isUserError(error: unknown): error is ClawError {
  return error instanceof ClawError && error.userError;
}

// Any class, including ones with protected or varied constructors.
type ErrorClass<T> = abstract new (...args: never[]) => T;

const maxCauseDepth = 32;

/**
 * `error`, then everything it was caused by: each `cause`, and the members of an
 * `AggregateError`, breadth first. Cycles are tolerated; at most 32 errors are visited. Every
 * walk over a cause chain in claw goes through here, so they all agree.
 */
export function* causeChain(error: unknown): Generator<unknown, void, undefined> {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < maxCauseDepth) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    yield current;
    if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
    if (current instanceof Error) pending.push(current.cause);
  }
}

/**
 * The first error in `error`'s cause chain (see {@link causeChain}) that is an instance of
 * `type`, like Go's `errors.As`; `undefined` when none is.
 */
export function findError<T>(error: unknown, type: ErrorClass<T>): T | undefined {
  for (const current of causeChain(error)) {
    if (current instanceof type) return current;
  }
  return undefined;
}

/** The first `ClawError` in `error`'s cause chain (see {@link causeChain}) with this `code`. */
export function findErrorWithCode(error: unknown, code: string): ClawError | undefined {
  for (const current of causeChain(error)) {
    if (current instanceof ClawError && current.code === code) return current;
  }
  return undefined;
}

/** True when anything in `error`'s cause chain (see {@link causeChain}) has this `code`. */
export function hasErrorCode(error: unknown, code: string): boolean {
  return findErrorWithCode(error, code) !== undefined;
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
 * The `code` of a Node system error (`"ENOENT"`, `"EEXIST"`…), if it has one. A `ClawError`'s
 * `code` is claw's own, not an errno: `undefined` for it.
 */
export function errnoCode(error: unknown): string | undefined {
  if (error instanceof ClawError) return undefined;
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
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
