/**
 * Command and handler: append conversation events to a session (DESIGN §2 write path).
 *
 * HTTP → command → load the session's state → checks → one atomic append with the expected
 * revision → `{ revision, position }`. Then a {@link SessionEventsAppended} event is published so
 * auto-compaction can run in the background; the append never waits for it.
 */
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { DuplicateEventIdError, WrongExpectedRevisionError, type AppendResult, type EventData, type EventStore, type ExpectedRevision } from '@lib/event-store';
import type { SessionEvent } from '@lib/compaction';
import { CONVERSATION_EVENT, sessionKey, sessionStream, type ConversationEventData, type SessionEventMetadata } from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { storeEventId } from '../domain/session-ids';
import { DuplicateEventIdConflictError, InvalidRequestError, RevisionConflictError } from '../errors';
import { ToolCallLedger } from '../domain/tool-call-ledger';
import { EVENT_STORE } from '../tokens';
import { SessionStateCache } from './session-state-cache';
import { archiveOnArrival } from './archive-on-arrival';

/** How many times an append without a client `expectedRevision` reloads and re-checks after the stream moved on. */
export const MAX_APPEND_ATTEMPTS = 8;

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
   * @throws UnknownToolCallError (422) when a tool response answers no call of the active window, of the request, or archived while open.
   * A late answer to a call archived while open (abandoned) is appended and archived on arrival (see `archiveOnArrival`).
   * @throws ToolCallConflictError (422) for a repeated or still-open call id, or a second answer.
   * @throws RevisionConflictError (409) when the client's `expectedRevision` does not match, or when the
   *   stream moved on {@link MAX_APPEND_ATTEMPTS} times in a row while this append was being checked.
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
    const data = this.eventData(command, key);
    const clientExpected = command.expectedRevision === 'any' ? null : command.expectedRevision;
    for (let attempt = 1; ; attempt++) {
      const state = await this.sessions.load(key);
      const hasPolicy = Boolean(state?.policy?.strategy);
      if (state && events.every((e) => state.revisionsById.has(e.event.id))) {
        // Every id is already in the log: an idempotent retry (the store answers the original) or a reuse with other content (409).
        return this.appendRetried(key, data, clientExpected ?? 'any', command, hasPolicy);
      }
      const ledger = ToolCallLedger.of(state ? [...state.active.values()].map((entry) => entry.event) : [], state?.archivedOpenCalls);
      const lateAnswers = events.flatMap((e) => {
        const { archivedBy } = ledger.accept(e.event, e.field);
        return archivedBy ? [{ eventId: e.event.id, compactionId: archivedBy }] : [];
      });
      // Late answers to calls archived while open are archived on arrival, in the same append.
      const batch = [...data, ...archiveOnArrival(key, lateAnswers, { tenantId: command.tenantId, sessionId: command.sessionId })];
      // Checked against revision R, so written at R: a concurrent append that changed the tool calls cannot slip in between.
      const expected: ExpectedRevision = clientExpected ?? state?.revision ?? 'no_stream';
      try {
        return this.appended(command, await this.store.appendToStream(sessionStream(key), batch, { expectedRevision: expected }), hasPolicy);
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError) {
          if (clientExpected === null && attempt < MAX_APPEND_ATTEMPTS) continue; // the stream moved on: reload, re-check, retry
          throw new RevisionConflictError(String(err.expected), String(err.actual));
        }
        if (err instanceof DuplicateEventIdError) return this.appendRetried(key, data, 'any', command, hasPolicy);
        throw err;
      }
    }
  }

  /** The stored form of the command's events: costs computed once, ids derived from (session, client id). */
  private eventData(command: AppendSessionEventsCommand, key: string): EventData[] {
    const userId = command.userId ?? undefined;
    const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
    return command.events.map((e) => {
      const payload: ConversationEventData = {
        event: e.event,
        costs: computeEventCosts(e.event),
        ...(e.createdAt ? { createdAt: e.createdAt } : {}),
        ...(e.metadata ? { metadata: e.metadata } : {}),
        ...(userId ? { userId } : {}),
      };
      return { id: storeEventId(key, e.event.id), type: CONVERSATION_EVENT, data: payload, metadata };
    });
  }

  /**
   * Appends events some of whose ids exist already. The store writes nothing then: it answers the
   * original result when every id is in place with identical content, and raises otherwise.
   */
  private async appendRetried(key: string, data: EventData[], expected: ExpectedRevision, command: AppendSessionEventsCommand, hasPolicy: boolean) {
    try {
      return this.appended(command, await this.store.appendToStream(sessionStream(key), data, { expectedRevision: expected }), hasPolicy);
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) throw new RevisionConflictError(String(err.expected), String(err.actual));
      if (err instanceof DuplicateEventIdError) {
        const clientId = command.events.find((e) => storeEventId(key, e.event.id) === err.eventId)?.event.id ?? err.eventId;
        throw new DuplicateEventIdConflictError(clientId);
      }
      throw err;
    }
  }

  private appended(command: AppendSessionEventsCommand, result: AppendResult, hasPolicy: boolean): AppendSessionEventsResult {
    this.eventBus.publish(new SessionEventsAppended(command.tenantId, command.sessionId, result.nextExpectedRevision, hasPolicy));
    return { revision: result.nextExpectedRevision.toString(), position: result.position.toString() };
  }
}
