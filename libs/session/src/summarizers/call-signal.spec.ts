import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { callSignal } from './call-signal';

describe('callSignal', () => {
  it('puts one listener on the long-lived signal however many calls run at once (11 or more warned of a leak)', () => {
    const shutdown = new AbortController();
    const calls = Array.from({ length: 25 }, () => callSignal(shutdown.signal));
    // was 25: one per call, and MaxListenersExceededWarning from the 11th
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    calls.slice(1).forEach((call) => call.release());
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    calls[0].release();
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
    // tied again after all were released: one listener again, and an abort reaches the new call
    const later = callSignal(shutdown.signal);
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(1);
    shutdown.abort();
    expect(later.signal!.aborted).toBe(true);
  });

  it('aborts, with the reason, exactly the calls not released when the long-lived signal aborts; later calls start aborted', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 30 }), (released) => {
        const shutdown = new AbortController();
        const calls = released.map(() => callSignal(shutdown.signal));
        calls.forEach((call, i) => released[i] && call.release());
        shutdown.abort(new Error('shutting down'));
        expect(calls.map((call) => call.signal!.aborted)).toEqual(released.map((r) => !r));
        for (const call of calls.filter((c) => c.signal!.aborted)) expect((call.signal!.reason as Error).message).toBe('shutting down');
        expect(callSignal(shutdown.signal).signal!.aborted).toBe(true);
      }),
    );
  });

  it('gives no signal without a long-lived one', () => {
    const call = callSignal(undefined);
    expect(call.signal).toBeUndefined();
    call.release();
  });
});
