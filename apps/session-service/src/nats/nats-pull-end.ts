import type { ConsumerMessages } from '@nats-io/jetstream';

/** The part of the client library's pull request ({@link ConsumerMessages} of `fetch`) that {@link endPull} drains. */
export interface DrainableSubscription {
  drain(): Promise<void>;
  isClosed(): boolean;
}

/**
 * The core subscription of the pull request `batch` (a `fetch` of `@nats-io/jetstream` 3.x): the
 * library's internal `sub` field of `PullConsumerMessagesImpl`, not public API (3.4 offers no
 * public way to drain a pull), or null when the library has none of that shape (an upgrade
 * removed or renamed it: {@link endPull} then falls back to `close()`, which drops what the server
 * already sent; `test/e2e/nats-pull-end.e2e-spec.ts` fails then, naming what to re-check).
 */
export function pullSubscriptionOf(batch: ConsumerMessages): DrainableSubscription | null {
  const sub = (batch as unknown as { sub?: Partial<DrainableSubscription> }).sub;
  return typeof sub?.drain === 'function' && typeof sub.isClosed === 'function' ? (sub as DrainableSubscription) : null;
}

/**
 * Ends the pull request `batch` (a `fetch` of `@nats-io/jetstream` 3.x) without dropping what the
 * server already sent to it: the inbox subscription ({@link pullSubscriptionOf}) is drained — `UNSUB`,
 * then a round trip to the server (`PING`/`PONG`), the subscription kept meanwhile — so a command
 * the server delivered before it processed the `UNSUB` (on the wire, or in the socket's buffer)
 * still reaches the pull's iterator, which then ends. `batch.close()` unsubscribes at once: the
 * client library drops such a command, which the server counts as delivered, and JetStream gives it
 * to another replica only after the consumer's ack wait (natsack). Falls back to `close()` when the
 * subscription cannot be drained (the connection closed, the subscription already closed, or a
 * library without it). Resolves once the iterator ended (what was delivered is yielded first); never rejects.
 */
export async function endPull(batch: ConsumerMessages): Promise<void> {
  const sub = pullSubscriptionOf(batch);
  try {
    if (sub && !sub.isClosed()) {
      await sub.drain();
      await batch.closed();
      return;
    }
  } catch {
    // The connection closed meanwhile: ended below.
  }
  await Promise.resolve(batch.close()).catch(() => undefined);
}
