/**
 * A replica's view of NATS in tests of the decisions feed: its JetStream handles fail while the
 * link is "down", and its publishes can be held back (a replica lagging behind another).
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsTestClient } from './nats-test';

/** `target` whose methods first await `before()` (which throws while the connection is "lost"), its other members as they are. */
export function guarded<T extends object>(target: T, before: () => Promise<void>): T {
  return new Proxy(target, {
    get(t, key) {
      const value = Reflect.get(t, key, t) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        await before();
        return (value as (...a: unknown[]) => unknown).apply(t, args);
      };
    },
  });
}

/** A replica's view of NATS: down (every JetStream call fails) or up, and its publishes optionally held until released. */
export class ReplicaLink {
  down = false;
  private held: Promise<void> | null = null;
  private releaseHeld: () => void = () => undefined;

  constructor(private readonly client: NatsTestClient) {}

  /** Publishes wait from now on until {@link release}. */
  hold(): void {
    this.held = new Promise((resolve) => (this.releaseHeld = resolve));
  }

  /** Lets the held publishes go on (even when down by then: they were sent before). */
  release(): void {
    this.held = null;
    this.releaseHeld();
  }

  /** The JetStream client the feed gets. */
  js(): JetStreamClient {
    return guarded(this.client.js, async () => {
      this.check();
      if (this.held) await this.held;
    });
  }

  /** The JetStream manager the feed gets (its `streams` member is what the feed calls). */
  jsm(): JetStreamManager {
    const streams = guarded(this.client.jsm.streams, async () => this.check());
    return new Proxy(this.client.jsm, { get: (t, key) => (key === 'streams' ? streams : Reflect.get(t, key, t)) });
  }

  private check(): void {
    if (this.down) throw new Error('test: NATS connection lost');
  }
}
