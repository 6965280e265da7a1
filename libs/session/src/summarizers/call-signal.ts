/**
 * One model call's own abort signal, tied to a long-lived one (e.g. the service's shutdown signal,
 * shared by every call of the process). The OpenAI SDK adds an `abort` listener to the signal it is
 * given and never removes it: given the shared signal, every call left one listener on it (a leak,
 * and `MaxListenersExceededWarning` at the 11th call). Given this signal instead, the SDK's
 * listener goes with it when the call ends; the one listener on `parent` is removed by `release()`.
 */
export interface CallSignal {
  /** Aborted when `parent` is (with its reason); undefined when there is no parent. */
  readonly signal: AbortSignal | undefined;
  /** Removes the listener on `parent` (call it when the model call has ended, in a `finally`). Idempotent. */
  release(): void;
}

/** A {@link CallSignal} tied to `parent` (none: no signal, nothing to release). */
export function callSignal(parent: AbortSignal | undefined): CallSignal {
  if (!parent) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const forward = (): void => controller.abort(parent.reason);
  parent.addEventListener('abort', forward, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener('abort', forward) };
}
