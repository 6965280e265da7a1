/**
 * Resolves once the event loop has polled for I/O since the call: two turns of its check phase
 * (`setImmediate`), so one whole poll phase has run between them. What the operating system had ready
 * at the call (a signal, a connection the kernel completed and queued on a listening socket) has then
 * been handed to its handler. Costs two event-loop turns, no timer.
 */
export async function eventLoopPolled(): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}
