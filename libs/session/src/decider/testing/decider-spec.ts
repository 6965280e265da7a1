/**
 * Given/when/then for the session decider (the Emmett-style spec shape): given the session's
 * past events (conversation events by their native shape, decision events by type and data),
 * when a command is decided, then these events are appended, or this error is raised.
 *
 * ```ts
 * given(user('u1'), assistantCalls('c1', 'call_1'))
 *   .when((state) => decideAppend(append(toolAnswer('t1', 'call_1')), state))
 *   .then((events) => expect(events.map(kindOf)).toEqual(['tool']));
 * ```
 */
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, type ConversationEventData } from '../../events/session-stream-events';
import { computeEventCosts } from '../../domain/event-costs';
import type { EventLocation } from '../../errors';
import { foldSessionWindow, type SessionWindowState, type StreamEvent } from '../../domain/session-window';

/** A past event of the session: a conversation event, or a stream event by type and data. */
export type GivenEvent = SessionEvent | { type: string; data: unknown };

function isConversationEvent(e: GivenEvent): e is SessionEvent {
  return 'id' in e && typeof (e as { id: unknown }).id === 'string' && !('data' in e);
}

/** The state after folding `events` in order (revisions 0, 1, …); null when there are none (no stream). */
export function stateOf(events: readonly GivenEvent[]): SessionWindowState | null {
  if (events.length === 0) return null;
  const stream: StreamEvent[] = events.map((e, i) => {
    if (!isConversationEvent(e)) return { type: e.type, data: e.data, revision: BigInt(i) };
    const data: ConversationEventData = { event: e, costs: computeEventCosts(e) };
    return { type: CONVERSATION_EVENT, data, revision: BigInt(i) };
  });
  return foldSessionWindow(stream);
}

/** The `then` half: either check the decided value, or check the error it raised. */
export interface WhenResult<T> {
  /** Runs `check` on the decision; fails the test if deciding raised. */
  then(check: (decision: T) => void): void;
  /**
   * Expects deciding to raise an error that is an instance of `type` with `code` and, for an error
   * about one event of the command, `location` (when given).
   */
  thenThrows(type: abstract new (...args: never[]) => Error, code?: string, location?: EventLocation): void;
}

/** Starts a spec from the session's past `events`. */
export function given(...events: GivenEvent[]) {
  const state = stateOf(events);
  return {
    /** Decides against the folded state. */
    when<T>(decide: (state: SessionWindowState | null) => T): WhenResult<T> {
      let outcome: { ok: true; value: T } | { ok: false; error: unknown };
      try {
        outcome = { ok: true, value: decide(state) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      return {
        then(check) {
          if (!outcome.ok) throw new Error(`expected a decision, but deciding raised: ${String(outcome.error)}`);
          check(outcome.value);
        },
        thenThrows(type, code, location) {
          if (outcome.ok)
            throw new Error(
              `expected ${type.name}, but deciding returned ${JSON.stringify(outcome.value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
            );
          expect(outcome.error).toBeInstanceOf(type);
          if (code !== undefined) expect((outcome.error as { code?: string }).code).toBe(code);
          if (location !== undefined) expect((outcome.error as { location?: EventLocation }).location).toEqual(location);
        },
      };
    },
  };
}
