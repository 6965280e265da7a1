/**
 * The one shape of a write refusal the session module puts around its event store: while a
 * condition of this process holds (the read models' disk is full, the read models come from another
 * log), the store's writes are refused without being sent, so nothing is acknowledged that no read
 * of this process could show.
 */
import { storeWith, type EventStore } from '@lib/event-store';

/**
 * `store`, whose `appendToStream` and `deleteStream` reject with the error `refusal()` answers
 * without writing, at each call; while it answers null they, and every other method always, are
 * `store`'s own.
 */
export function refusingWritesWhile(store: EventStore, refusal: () => Error | null): EventStore {
  return storeWith(store, {
    appendToStream: (...args) => {
      const refused = refusal();
      return refused ? Promise.reject(refused) : store.appendToStream(...args);
    },
    deleteStream: (...args) => {
      const refused = refusal();
      return refused ? Promise.reject(refused) : store.deleteStream(...args);
    },
  });
}
