import type { ConsumerMessages } from '@nats-io/jetstream';

/** The part of the client library's pull request ({@link ConsumerMessages} of `fetch`) that {@link endPull} drains. */
interface DrainableSubscription {
  drain(): Promise<void>;
  isClosed(): boolean;
}

/**
 * Ends the pull request `batch` (a `fetch` of `@nats-io/jetstream` 3.x) without dropping what the
 * server already sent to it: the inbox subscription is drained — `UNSUB`, then a round trip to the
 * server (`PING`/`PONG`), the subscription kept meanwhile — so a command the server delivered before
 * it processed the `UNSUB` (on the wire, or in the socket's buffer) still reaches the pull's iterator,
 * which then ends. `batch.close()` unsubscribes at once: the client library drops such a command,
 * which the server counts as delivered, and JetStream gives it to another replica only after the
 * consumer's ack wait (natsack). Falls back to `close()` when the subscription cannot be drained
 * (the connection closed, the subscription already closed, or a library without it).
 * Resolves once the iterator ended (what was delivered is yielded first); never rejects.
 */
export async function endPull(batch: ConsumerMessages): Promise<void> {
  const sub = (batch as unknown as { sub?: Partial<DrainableSubscription> }).sub;
  try {
    if (typeof sub?.drain === 'function' && typeof sub.isClosed === 'function' && !sub.isClosed()) {
      await sub.drain();
      await batch.closed();
      return;
    }
  } catch {
    // The connection closed meanwhile: ended below.
  }
  await Promise.resolve(batch.close()).catch(() => undefined);
}
