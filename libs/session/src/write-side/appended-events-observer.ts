/**
 * What an application may learn of the appends it makes, without the event bus (which an append
 * to a session without a policy does not publish on, to spare its cost): the kinds of the
 * conversation events each append wrote, e.g. to count them (`events_appended_total`).
 */
import type { SessionEvent } from '@lib/compaction';

/** Told of each append that wrote conversation events; never of a retry, which writes nothing, nor of a refused one. */
export interface AppendedEventsObserver {
  /**
   * `types`: the kind of each conversation event written, in order (arrival archives are not
   * conversation events). Called on the append's path, after the store's answer: keep it cheap,
   * and never throw.
   */
  appended(types: ReadonlyArray<SessionEvent['type']>): void;
}

/** Injection token of the optional {@link AppendedEventsObserver} (`SessionModuleOptions.appendedEvents`). */
export const APPENDED_EVENTS_OBSERVER = Symbol('APPENDED_EVENTS_OBSERVER');
