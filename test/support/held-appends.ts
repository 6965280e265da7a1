/**
 * Holds an event store's appends for a test: the first append (or every one) to a matching stream
 * waits until the test opens the gate, so the test can act while a write is in flight.
 */
import type { EventStore } from '@lib/event-store';

/** A gate on `store.appendToStream` ({@link holdAppends}). */
export interface HeldAppends {
  /** Settles once an append to a matching stream is held. */
  reached: Promise<void>;
  /** Lets the held appends go on and restores the store's own `appendToStream` (idempotent). */
  open(): void;
}

/**
 * Replaces `store.appendToStream` so that appends to a stream `matches` accepts wait for
 * {@link HeldAppends.open}; with `firstOnly`, only the first such append waits (the later ones go
 * through). Other streams' appends go through at once.
 */
export function holdAppends(store: EventStore, matches: (stream: string) => boolean, options: { firstOnly?: boolean } = {}): HeldAppends {
  const append = store.appendToStream.bind(store);
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let held = false;
  store.appendToStream = async (...args: Parameters<EventStore['appendToStream']>) => {
    if (matches(args[0]) && !(options.firstOnly && held)) {
      held = true;
      entered();
      await gate;
    }
    return append(...args);
  };
  return {
    reached,
    open: () => {
      store.appendToStream = append;
      release();
    },
  };
}
