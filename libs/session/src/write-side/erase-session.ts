/**
 * Command and handler: erase a session (issue 7 item 6). The session's stream is deleted from the
 * store (KurrentDB: stream deletion; SQLite: its rows), every read-model row of it is removed, and
 * the deletion itself is recorded in the tenant's `erasure-<tenantId>` stream without content
 * (session id, event count, time).
 */
import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import type { EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { SessionNotFoundError } from '../errors';
import { EVENT_STORE } from '../tokens';
import { SessionProjector } from '../read-side/session-projector';
import { SessionStateCache } from './session-state-cache';

export { SESSION_ERASED, erasureStream } from '../events/erasure-events';

/** Erase `sessionId` of `tenantId`. */
export class EraseSessionCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
  ) {}
}

/** What an erasure answers: the session, how many stream events were removed, and when. */
export interface EraseAnswer {
  sessionId: string;
  erasedEvents: number;
  erasedAt: string;
}

/** Handles {@link EraseSessionCommand}. */
@CommandHandler(EraseSessionCommand)
export class EraseSessionHandler implements ICommandHandler<EraseSessionCommand, EraseAnswer> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    private readonly projector: SessionProjector,
  ) {}

  /** @throws SessionNotFoundError (404) when the session does not exist. */
  async execute(command: EraseSessionCommand): Promise<EraseAnswer> {
    const key = sessionKey(command.tenantId, command.sessionId);
    const stream = sessionStream(key);
    const revision = await this.store.streamRevision(stream);
    if (revision === null) throw new SessionNotFoundError(command.sessionId);
    const erasedAt = new Date().toISOString();
    const erasedEvents = Number(revision + 1n);
    await this.store.appendToStream(erasureStream(command.tenantId), [
      { id: randomUUID(), type: SESSION_ERASED, data: { sessionId: command.sessionId, erasedEvents, erasedAt } satisfies SessionErasedData },
    ]);
    // Let the projector pass the stream's last event first, so that it cannot re-create rows of
    // the session from a batch it read before the deletion.
    const [last] = await this.store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last) await this.projector.waitForPosition(last.position, 5000);
    await this.store.deleteStream(stream);
    this.sessions.invalidate(key);
    this.projector.eraseSession(command.tenantId, command.sessionId);
    return { sessionId: command.sessionId, erasedEvents, erasedAt };
  }
}
