import { eventLoopPolled } from './event-loop-polled';

/**
 * The signals that stop the service (SIGTERM, SIGINT, SIGHUP), caught from the moment `main.ts` starts
 * loading: `main.ts` imports this module first, and importing it installs the listeners. Without a
 * listener Node leaves a signal to the operating system's default, which ends the process at once and
 * silently (exit code 143 for SIGTERM in a shell), so a signal sent while the service's modules load and
 * while it starts (about 2 s before it listens) ended it without a line, without closing its store and
 * leaving `DATA_DIR`'s lock record behind. A signal received before `main.ts` hands them to its handler
 * ({@link handleShutdownSignals}) is kept and handed to it then.
 *
 * Signals sent before Node runs this module (its own start, the `-r` preloads) still end the process at once.
 */

/** The signals that stop the service gracefully (SIGHUP too: without a handler Node ends at once, without the drain or a line). */
export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** One of {@link SHUTDOWN_SIGNALS}. */
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/** Where signals go once main.ts has said (null before). */
let handler: ((signal: ShutdownSignal) => void) | null = null;
/** Signals received before there was a handler, in order. */
const received: ShutdownSignal[] = [];

/** The one listener of each signal: to the handler, or kept for it. */
function onSignal(signal: NodeJS.Signals): void {
  const stop = signal as ShutdownSignal;
  if (handler) handler(stop);
  else received.push(stop);
}

for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);

/**
 * Hands every shutdown signal to `handle` from now on (replacing an earlier handler); the signals
 * received before, kept meanwhile, are handed to it at once, in order.
 */
export function handleShutdownSignals(handle: (signal: ShutdownSignal) => void): void {
  handler = handle;
  for (const signal of received.splice(0)) handle(signal);
}

/**
 * Resolves once the event loop has polled for I/O since the call (two turns of its check phase, `setImmediate`),
 * so that a signal that arrived meanwhile has been handed to the handler. Start-up work holds the event loop for
 * a second or more at a time without polling (the modules' loading, the embedded store's opening and the
 * application's set-up run through without waiting for I/O): a signal sent then is seen only between such steps.
 */
export async function signalsSeen(): Promise<void> {
  await eventLoopPolled();
}

/**
 * Ends the process by `signal`, as it would have ended without a handler (a supervisor sees the
 * signal; a shell's exit code is 128 + its number: 143 for SIGTERM, 130 for SIGINT, 129 for SIGHUP):
 * every listener of those signals is removed (a library's too: one left would keep the process alive), then the
 * signal is sent to the process itself.
 */
export function endBySignal(signal: ShutdownSignal): void {
  for (const s of SHUTDOWN_SIGNALS) process.removeAllListeners(s);
  process.kill(process.pid, signal);
}
