/**
 * Command and handler: erase a session (issue 7 item 6). The session's stream is deleted from the
 * store (KurrentDB: stream deletion; SQLite: its rows), every read-model row of it is removed, and
 * the deletion itself is recorded in the tenant's `erasure-<tenantId>` stream without content
 * (session id, event count, time, the position of the last deleted event).
 */
import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { WrongExpectedRevisionError, type EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasedBefore, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { RevisionConflictError, SessionNotFoundError } from '../errors';
import { EVENT_STORE } from '../tokens';
import { SessionProjector } from '../read-side/session-projector';
import { lastLoggedPositionUpTo } from '../read-side/queries/session-row';
import { SessionStateCache } from './session-state-cache';

export { SESSION_ERASED, erasureStream } from '../events/erasure-events';

/** Erase `sessionId` of `tenantId`. */
export class EraseSessionCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
  ) {}
}

/** What an erasure answers: the session, how many stream events were removed, when, and the global position of its erasure record (decimal text). */
export interface EraseAnswer {
  sessionId: string;
  erasedEvents: number;
  erasedAt: string;
  /** Global position of the `SessionErased` record (decimal text): another replica's reads with it as `minPosition` no longer show the session. */
  position: string;
}

/** How many times an erasure reads the session's revision and tries to delete at it, while appends keep landing, before it answers 409. */
export const MAX_ERASE_ATTEMPTS = 8;

/** Erasure records read at a time when a resend of a finished erasure looks for its record. */
const ERASURE_RECORDS_PAGE = 256;

/** How long (ms) an erasure waits for this replica's projector to pass its record before it erases the read-model rows itself. */
const PROJECTOR_WAIT_MS = 5000;

/**
 * Handles {@link EraseSessionCommand}. The stream is deleted at the revision just read (an append
 * that lands meanwhile makes the deletion fail, and it is tried again, so that it goes too); the
 * record, appended after the deletion, names the global position of the last deleted event. Every
 * replica's projector erases the session's rows when it reaches the record, in log order: the
 * deleted events all come before it, and it erases only rows projected up to that position, so an
 * append to the same session id after the deletion (a new stream, before or after the record) is
 * kept.
 */
@CommandHandler(EraseSessionCommand)
export class EraseSessionHandler implements ICommandHandler<EraseSessionCommand, EraseAnswer> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    private readonly projector: SessionProjector,
  ) {}

  /**
   * A resend of an erasure that finished answers as it did (its record's values and position).
   * @throws SessionNotFoundError (404) when the session does not exist and was never erased.
   * @throws RevisionConflictError (409) when appends landed {@link MAX_ERASE_ATTEMPTS} times in a row between reading the revision and deleting; nothing was erased.
   */
  async execute(command: EraseSessionCommand): Promise<EraseAnswer> {
    const key = sessionKey(command.tenantId, command.sessionId);
    const stream = sessionStream(key);
    const deleted = await this.deleteAtRevision(stream);
    this.sessions.invalidate(key);
    if ('emptyAt' in deleted) {
      // Nothing to delete: an interrupted erasure to finish, or a resend of one that finished (its original answer), or 404.
      const previous = await this.finishedErasure(command, deleted.emptyAt);
      if (previous) return previous;
    }
    const erasedAt = new Date().toISOString();
    const data: SessionErasedData = !('emptyAt' in deleted)
      ? {
          sessionId: command.sessionId,
          // Revisions are gapless within a stream but a session written again after an erasure
          // continues after the erased revisions: count from the stream's first event.
          erasedEvents: Number(deleted.last.revision - deleted.first + 1n),
          erasedAt,
          lastPosition: deleted.last.position.toString(),
        }
      : { sessionId: command.sessionId, erasedEvents: 0, erasedAt, lastPosition: (await this.leftByInterruptedErasure(command, deleted.emptyAt)).toString() };
    const recorded = await this.store.appendToStream(erasureStream(command.tenantId), [{ id: randomUUID(), type: SESSION_ERASED, data }]);
    // Reads after this answer see no row of the session: this replica's projector erases them at
    // the record. If it lags, the rows it projected from the deleted events are erased here (an
    // append to the same id after the deletion is not one of them, and is kept).
    if (!(await this.projector.waitForPosition(recorded.position, PROJECTOR_WAIT_MS)))
      this.projector.eraseSession(command.tenantId, command.sessionId, erasedBefore(data));
    return { sessionId: command.sessionId, erasedEvents: data.erasedEvents, erasedAt, position: recorded.position.toString() };
  }

  /**
   * A resend of an erasure that finished: when the session has no event and this replica's read
   * models hold none either (nothing left by an interrupted erasure), the latest erasure record of
   * the session up to `emptyAt` (the log's head read before finding the stream empty) answers it,
   * as it answered then (`erasedEvents`, `erasedAt`, the record's position): a client retrying
   * after a lost answer gets 200, not 404. Reads the tenant's erasure records backwards, 256 at a
   * time (only on this path). Returns null when the read models still hold the session (then
   * {@link leftByInterruptedErasure} finishes it) or when no record names it (404).
   */
  private async finishedErasure(command: EraseSessionCommand, emptyAt: bigint): Promise<EraseAnswer | null> {
    await this.projector.waitForPosition(emptyAt, PROJECTOR_WAIT_MS);
    if (lastLoggedPositionUpTo(this.projector.store, command.tenantId, command.sessionId, emptyAt) !== null) return null;
    const stream = erasureStream(command.tenantId);
    let from: bigint | 'end' = 'end';
    for (;;) {
      const page = await this.store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: ERASURE_RECORDS_PAGE });
      for (const record of page) {
        const data = record.data as SessionErasedData;
        if (record.type === SESSION_ERASED && data.sessionId === command.sessionId && record.position <= emptyAt)
          return { sessionId: data.sessionId, erasedEvents: data.erasedEvents, erasedAt: data.erasedAt, position: record.position.toString() };
      }
      const oldest = page.at(-1);
      if (page.length < ERASURE_RECORDS_PAGE || !oldest || oldest.revision === 0n) return null;
      from = oldest.revision - 1n;
    }
  }

  /**
   * An erasure whose stream is already gone: when this replica's read models (once at the log's
   * head) still hold the session, an earlier erasure deleted the stream and stopped before its
   * record (the store failed, the process ended): this one writes the record, so every replica
   * erases the rows. `emptyAt`: the log's head read before the stream was found empty; an event of
   * the session written again after that has a later position and is not erased (another
   * erasure may be finishing meanwhile, and an append re-create the session). Returns the
   * position of the session's last event the read models hold up to `emptyAt`.
   * @throws SessionNotFoundError when the read models hold no such event either.
   */
  private async leftByInterruptedErasure(command: EraseSessionCommand, emptyAt: bigint): Promise<bigint> {
    await this.projector.waitForPosition(emptyAt, PROJECTOR_WAIT_MS);
    const last = lastLoggedPositionUpTo(this.projector.store, command.tenantId, command.sessionId, emptyAt);
    if (last === null) throw new SessionNotFoundError(command.sessionId);
    return last;
  }

  /**
   * Deletes `stream` at the revision of its last event, just read; returns the revision of its
   * first event and the last event's revision and global position, or, when the stream has no
   * event, `emptyAt`: the log's head read before finding it empty.
   */
  private async deleteAtRevision(stream: string): Promise<{ first: bigint; last: { revision: bigint; position: bigint } } | { emptyAt: bigint }> {
    for (let attempt = 1; ; attempt++) {
      const logHead = await this.store.headPosition();
      const [last] = await this.store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
      if (!last) return { emptyAt: logHead };
      const revision = last.revision;
      // Appends only add after `last`, and a deletion at `revision` fails if one did: the first
      // event read now is the first one deleted.
      const [head] = await this.store.readStream(stream, { fromRevision: 'start', maxCount: 1 });
      try {
        await this.store.deleteStream(stream, { expectedRevision: revision });
        return { first: head?.revision ?? revision, last };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (attempt >= MAX_ERASE_ATTEMPTS)
          throw new RevisionConflictError(
            String(revision),
            String(err.actual),
            `other writers appended to the session ${attempt} times in a row while it was being erased; nothing was erased: send the erasure again`,
          );
      }
    }
  }
}
