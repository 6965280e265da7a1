/**
 * One model call's own abort signal, tied to a long-lived one (e.g. the service's shutdown signal,
 * shared by every call of the process). The OpenAI SDK adds an `abort` listener to the signal it is
 * given and never removes it: given the shared signal, every call left one listener on it (a leak,
 * and `MaxListenersExceededWarning` at the 11th call). Given this signal instead, the SDK's
 * listener goes with it when the call ends. The long-lived signal carries one listener in all
 * while any call is tied to it (none once every call is released), whatever the number of calls at
 * once, which aborts the signals of the calls not yet released:
 * one listener per call (removed at release) still warned "Possible EventTarget memory leak
 * detected" once 11 calls or rate-limit waits ran at once (newcomer ncverify45 F3).
 */
export interface CallSignal {
  /** Aborted when `parent` is (with its reason); undefined when there is no parent. */
  readonly signal: AbortSignal | undefined;
  /** Unties this call's signal from `parent` (call it when the model call has ended, in a `finally`). Idempotent. */
  release(): void;
}

/** The calls tied to a long-lived signal and not released yet, with the one listener that aborts them. */
interface TiedCalls {
  readonly calls: Set<AbortController>;
  readonly onAbort: () => void;
}

/** The calls tied to each long-lived signal ({@link TiedCalls}), while any is. */
const tiedCalls = new WeakMap<AbortSignal, TiedCalls>();

/** A {@link CallSignal} tied to `parent` (none: no signal, nothing to release). */
export function callSignal(parent: AbortSignal | undefined): CallSignal {
  if (!parent) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  let tied = tiedCalls.get(parent);
  if (!tied) {
    const calls = new Set<AbortController>();
    const onAbort = (): void => {
      tiedCalls.delete(parent);
      for (const call of calls) call.abort(parent.reason);
    };
    tied = { calls, onAbort };
    tiedCalls.set(parent, tied);
    parent.addEventListener('abort', onAbort, { once: true });
  }
  const { calls, onAbort } = tied;
  calls.add(controller);
  return {
    signal: controller.signal,
    release: () => {
      // the last call released: no listener is left on `parent`
      if (calls.delete(controller) && calls.size === 0 && tiedCalls.get(parent) === tied) {
        tiedCalls.delete(parent);
        parent.removeEventListener('abort', onAbort);
      }
    },
  };
}
