/**
 * Test helper: holds back an answer of a SQLite store's writer thread, so that a spec can act in
 * the moment when the thread has committed a batch (it is in the file, `headPosition` counts it)
 * and the store has not been told yet (its reads of the global log stop before it).
 */
import type { SqliteEventStore } from '../src';

/** The main thread's side of the store's writer thread (`SqliteWriterThread`): where its answers arrive. */
interface WriterThreadInternals {
  settle(reply: unknown): void;
}

/** A held answer: see {@link holdNextWriterAnswer}. */
export interface HeldWriterAnswer {
  /** Resolves once the answer arrived and is held (the thread answers after its COMMIT returned). */
  arrived: Promise<void>;
  /** Hands the answer to the store: at once when it arrived, else as soon as it arrives. Idempotent (call it in an `afterEach` too). */
  deliver: () => void;
}

/**
 * Holds back the next answer `store`'s writer thread sends (the thread starts with the store's
 * first write: write once before). Reaches into the store's private `writerThread`.
 * @throws Error when the writer thread is not started.
 */
export function holdNextWriterAnswer(store: SqliteEventStore): HeldWriterAnswer {
  const thread = (store as unknown as { writerThread?: WriterThreadInternals }).writerThread;
  if (!thread) throw new Error('the writer thread is not started: write once first');
  const settle = thread.settle.bind(thread);
  let held: { reply: unknown } | null = null;
  let released = false;
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => (arrived = resolve));
  thread.settle = (reply) => {
    thread.settle = settle;
    if (released) return settle(reply);
    held = { reply };
    arrived();
  };
  return {
    arrived: arrival,
    deliver: () => {
      if (released) return;
      released = true;
      if (held) settle(held.reply);
    },
  };
}
