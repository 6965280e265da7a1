/**
 * Lets the event loop serve pending I/O (other clients' requests) before the caller goes on: resolves after
 * at least one poll phase of the loop (two `setImmediate` turns: the first may run in the current
 * iteration's check phase, the second runs after the next poll). Use after a long piece of
 * synchronous work (tens of ms), before starting the next, so that one costly request or event
 * does not hold every other client for the sum of both.
 */
export function yieldToIo(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** Synchronous work at least this long (ms) is followed by {@link yieldToIo} where a caller chains more work. */
export const LONG_TASK_MS = 10;
