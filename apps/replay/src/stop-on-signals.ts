/**
 * Ctrl-C for the repository's command-line runs: the replay (`npm run replay`), the bench
 * (`npm run bench`) and the conformance runner (`npm run conformance`). The first SIGINT or
 * SIGTERM aborts an AbortSignal (its reason: the signal's name); the run stops, removes what it
 * created (its temporary store or data directories) and rejects with a {@link RunInterrupted}
 * saying how far it got; the command prints that one line and exits with
 * {@link interruptedExitCode} (130 on SIGINT, 143 on SIGTERM). A second signal while it cleans up
 * ends the process at once (Node's default).
 */
import { constants } from 'node:os';

/** The abort signal of a run and how to stop listening. */
export interface SignalStop {
  /** Aborted by the first SIGINT or SIGTERM, with the signal's name (`SIGINT`) as its reason. */
  readonly signal: AbortSignal;
  /** Removes the handlers (a later signal then has Node's default effect). */
  dispose(): void;
}

/** Listens for SIGINT and SIGTERM, once each (see the module doc). */
export function stopOnSignals(): SignalStop {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => controller.abort(signal);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The name of the signal that aborted `signal` (`SIGINT`, `SIGTERM`), or `a signal`. */
export function signalName(signal: AbortSignal | undefined): string {
  return typeof signal?.reason === 'string' ? signal.reason : 'a signal';
}

/** A run stopped by a signal after cleaning up; the message is the one line its command prints. */
export class RunInterrupted extends Error {
  override readonly name: string = 'RunInterrupted';
  /**
   * @param signal the signal that stopped it (e.g. SIGINT)
   * @param howFar the rest of the line: `after 37 of 120 turns (…); no report written`
   */
  constructor(
    readonly signal: string,
    howFar: string,
  ) {
    super(`interrupted by ${signal} ${howFar}`);
  }
}

/** Exit code of a command stopped by `signal`, as a shell reports a process ended by it: 128 + its number (SIGINT 130, SIGTERM 143). */
export function interruptedExitCode(signal: string): number {
  return 128 + (constants.signals[signal as NodeJS.Signals] ?? constants.signals.SIGINT);
}

/**
 * `work`, or a rejection with `interruption()` as soon as `signal` aborts (also when it already
 * has): the caller stops waiting for work that cannot be cancelled, cleans up and exits.
 */
export function untilStopped<T>(work: Promise<T>, signal: AbortSignal, interruption: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(interruption());
  let onAbort = (): void => undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(interruption());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, stopped]).finally(() => signal.removeEventListener('abort', onAbort));
}
