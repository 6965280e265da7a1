import { randomUUID } from 'node:crypto';
import type { EventData, EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT } from '../../events/session-stream-events';
import type { SessionProjector } from '../session-projector';
import { costs, user } from './recorded-session-log';

/**
 * Test helpers for specs of a projector following a real store: events to append, a store with
 * some methods replaced or watched, and a wait for the projector's checkpoint that does not
 * itself make the projector look for a deleted tail (as `waitForPosition` does).
 */

/** A user message `id` with `text`, as the write side appends it to a session stream (event id random). */
export function conversationEvent(id: string, text: string): EventData {
  return { id: randomUUID(), type: CONVERSATION_EVENT, data: { event: user(id, text), costs: costs(text.length) } };
}

/**
 * `store` with the methods of `overrides` in place of its own; every other method is `store`'s,
 * bound to it (an `Object.create(store)` would let a method write the store's private fields on
 * the wrapper instead).
 */
export function withOverrides(store: EventStore, overrides: Partial<EventStore>): EventStore {
  return new Proxy(store, {
    get(target, key) {
      if (Object.prototype.hasOwnProperty.call(overrides, key)) return overrides[key as keyof EventStore];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A store whose `readableHead` calls are counted: {@link readableHeadCalls}. */
export interface WatchedReadableHead {
  store: EventStore;
  /** Resolves once `readableHead` has been called `count` more times from now on. */
  calls(count: number): Promise<void>;
}

/**
 * `store`, counting its `readableHead` calls. A projector's checks of the log's tail run one after
 * the other and each starts with that call, so the start of the (n + 1)-th call means n whole
 * checks ended (their checkpoint moved, or not).
 */
export function readableHeadCalls(store: EventStore): WatchedReadableHead {
  let made = 0;
  let waiters: Array<{ at: number; done: () => void }> = [];
  const watched = withOverrides(store, {
    readableHead: () => {
      made++;
      waiters = waiters.filter((w) => (made >= w.at ? (w.done(), false) : true));
      return store.readableHead();
    },
  });
  return {
    store: watched,
    calls: (count) => new Promise<void>((done) => waiters.push({ at: made + count, done })),
  };
}

/**
 * Whether `projector`'s checkpoint reaches `position` (bigint) within `withinMs`: watched through
 * `onCheckpoint`, so, unlike `waitForPosition`, nothing is waiting for the projector meanwhile.
 */
export function checkpointReaches(projector: SessionProjector, position: bigint, withinMs: number): Promise<boolean> {
  if (projector.checkpoint() >= position) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => finish(false), withinMs);
    const remove = projector.onCheckpoint((checkpoint) => {
      if (checkpoint >= position) finish(true);
    });
    function finish(reached: boolean): void {
      clearTimeout(timer);
      remove();
      resolve(reached);
    }
  });
}
