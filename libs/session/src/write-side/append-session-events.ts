/**
 * Command and handler: append conversation events to a session (DESIGN §2 write path).
 *
 * HTTP → command → load the session's state → checks → one atomic append with the expected
 * revision → `{ revision, position }`. Then a {@link SessionEventsAppended} event is published so
 * auto-compaction can run in the background; the append never waits for it.
 */
import { isDeepStrictEqual } from 'node:util';
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { DuplicateEventIdError, WrongExpectedRevisionError, type EventData, type EventStore, type ExpectedRevision } from '@lib/event-store';
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, sessionKey, sessionStream, type ConversationEventData, type SessionEventMetadata } from '../events/session-stream-events';
import { computeEventCostsInSlices } from '../domain/event-costs';
import { storeEventId } from '../domain/session-ids';
import { DuplicateEventIdConflictError, InvalidRequestError, RevisionConflictError } from '../errors';
import { ToolCallLedger } from '../domain/tool-call-ledger';
import { EVENT_STORE } from '../tokens';
import { SessionStateCache } from './session-state-cache';

/** One event to append: a native session event (with its client id) plus optional client fields. */
export interface EventToAppend {
  event: SessionEvent;
  /** ISO-8601 time from the client, if given. */
  createdAt?: string;
  metadata?: Record<string, unknown>;
  /** JSON path of this event in the request, for error messages (e.g. `events[2]`). */
  field: string;
}

/** Append `events` to `sessionId` of `tenantId`. `expectedRevision` default `'any'`. */
export class AppendSessionEventsCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly events: EventToAppend[],
    readonly expectedRevision: ExpectedRevision = 'any',
    readonly userId?: string,
  ) {}
}

/** The answer to an append: the stream revision of the last event written and its global position (decimal strings). */
export interface AppendSessionEventsResult {
  revision: string;
  position: string;
}

/**
 * Published after a successful append (for auto-compaction). `hasPolicy` says whether the session
 * had an auto-compaction policy when the append was checked, so sessions without one cost the
 * scheduler nothing.
 */
export class SessionEventsAppended {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly revision: bigint,
    readonly hasPolicy: boolean = true,
  ) {}
}

/** Handles {@link AppendSessionEventsCommand}: checks, costs each event once, appends atomically. */
@CommandHandler(AppendSessionEventsCommand)
export class AppendSessionEventsHandler implements ICommandHandler<AppendSessionEventsCommand, AppendSessionEventsResult> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    private readonly eventBus: EventBus,
  ) {}

  /**
   * @throws InvalidRequestError (400) on an empty list or a client id repeated in the request.
   * @throws UnknownToolCallError (422) when a tool response answers no call of the active window or of the request.
   * @throws ToolCallConflictError (422) for a repeated or still-open call id, or a second answer.
   * @throws RevisionConflictError (409) when `expectedRevision` does not match.
   * @throws DuplicateEventIdConflictError (409) when a client id was used before with other content.
   */
  async execute(command: AppendSessionEventsCommand): Promise<AppendSessionEventsResult> {
    const { events } = command;
    const key = sessionKey(command.tenantId, command.sessionId);
    if (events.length === 0) throw new InvalidRequestError('events', 'events: send at least one event');
    const seen = new Set<string>();
    for (const e of events) {
      if (seen.has(e.event.id)) throw new InvalidRequestError(`${e.field}.id`, `${e.field}.id: id ${JSON.stringify(e.event.id)} appears twice in this request`);
      seen.add(e.event.id);
    }
    // Counted before the state is loaded: counting a large request takes several turns of the event loop.
    const costs = await computeEventCostsInSlices(events.map((e) => e.event));
    const state = await this.sessions.load(key);
    // A resend of events still in the window is a retry (the store answers its original result),
    // not new tool calls or answers: the ledger would call a resent answer a second answer.
    const resent = state !== null && events.every((e) => isDeepStrictEqual(state.active.get(e.event.id)?.event, e.event));
    const ledger = ToolCallLedger.of(state ? [...state.active.values()].map((entry) => entry.event) : []);
    if (!resent) for (const e of events) ledger.accept(e.event, e.field);
    const userId = command.userId ?? undefined;
    const data: EventData[] = events.map((e, i) => {
      const payload: ConversationEventData = {
        event: e.event,
        costs: costs[i],
        ...(e.createdAt ? { createdAt: e.createdAt } : {}),
        ...(e.metadata ? { metadata: e.metadata } : {}),
        ...(userId ? { userId } : {}),
      };
      const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
      return { id: storeEventId(key, e.event.id), type: CONVERSATION_EVENT, data: payload, metadata };
    });
    try {
      const result = await this.store.appendToStream(sessionStream(key), data, { expectedRevision: command.expectedRevision });
      this.eventBus.publish(new SessionEventsAppended(command.tenantId, command.sessionId, result.nextExpectedRevision, Boolean(state?.policy?.strategy)));
      return { revision: result.nextExpectedRevision.toString(), position: result.position.toString() };
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) throw new RevisionConflictError(String(err.expected), String(err.actual));
      if (err instanceof DuplicateEventIdError) {
        const clientId = events.find((e) => storeEventId(key, e.event.id) === err.eventId)?.event.id ?? err.eventId;
        throw new DuplicateEventIdConflictError(clientId);
      }
      throw err;
    }
  }
}
