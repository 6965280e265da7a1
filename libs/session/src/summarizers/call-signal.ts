/**
 * One model call's own abort signal, tied to a long-lived one (e.g. the service's shutdown signal,
 * shared by every call of the process). The OpenAI SDK adds an `abort` listener to the signal it is
 * given and never removes it: given the shared signal, every call left one listener on it (a leak,
 * and `MaxListenersExceededWarning` at the 11th call). Given this signal instead, the SDK's
 * listener goes with it when the call ends. The long-lived signal carries one listener in all,
 * whatever the number of calls at once, which aborts the signals of the calls not yet released:
 * one listener per call (removed at release) still warned "Possible EventTarget memory leak
 * detected" once 11 calls or rate-limit waits ran at once (newcomer ncverify45 F3).
 */
export interface CallSignal {
  /** Aborted when `parent` is (with its reason); undefined when there is no parent. */
  readonly signal: AbortSignal | undefined;
  /** Unties this call's signal from `parent` (call it when the model call has ended, in a `finally`). Idempotent. */
  release(): void;
}

/** The controllers of the calls tied to each long-lived signal and not released yet. */
const tiedCalls = new WeakMap<AbortSignal, Set<AbortController>>();

/** A {@link CallSignal} tied to `parent` (none: no signal, nothing to release). */
export function callSignal(parent: AbortSignal | undefined): CallSignal {
  if (!parent) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  let calls = tiedCalls.get(parent);
  if (!calls) {
    const tied = new Set<AbortController>();
    calls = tied;
    tiedCalls.set(parent, tied);
    // the one listener on `parent`: it stays until `parent` aborts (or is collected with it)
    parent.addEventListener(
      'abort',
      () => {
        for (const call of tied) call.abort(parent.reason);
        tied.clear();
      },
      { once: true },
    );
  }
  calls.add(controller);
  const tied = calls;
  return { signal: controller.signal, release: () => void tied.delete(controller) };
}
