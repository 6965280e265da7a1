/**
 * Command and handler: erase a session (issue 7 item 6). The session's stream is deleted from the
 * store (KurrentDB: stream deletion; SQLite: its rows), every read-model row of it is removed, and
 * the deletion itself is recorded in the tenant's `erasure-<tenantId>` stream without content
 * (session id, event count, time, the position and revision of the last deleted event): one record
 * per life of the session, however many erasures of it run at once, on however many replicas.
 */
import { ErasuresInProgress } from './erasures-in-progress';
import { Inject, Logger, Optional } from '@nestjs/common';
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { quoteInput } from '@lib/compaction';
import { DuplicateEventIdError, WrongExpectedRevisionError, deterministicEventId, type EventStore, type RecordedEvent } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasedRowsOf, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { isCompactionDecision } from '../decider/client-expected-revision';
import { ErasureInterruptedError, SessionNotFoundError } from '../errors';
import { COMMAND_EVENT_STORE } from '../tokens';
import { EVENT_LOOP_LOCK_WAIT_MS, isReadModelsUnwritable, isReadModelsLocked, SessionProjector, unwritableForFullDisk } from '../read-side/session-projector';
import { lastLoggedPositionUpTo, loggedLifeUpTo } from '../read-side/queries/session-row';
import { SessionStateCache } from './session-state-cache';
import { sessionClaimName } from './session-claims';
import type { RequestedBy } from '../events/requested-by';
import { checkWriteAdmission } from '../decider/write-admission';
import { lifeAtArrival } from './life-at-arrival';
import { SessionDecisionRecorded } from './session-decision-recorded';
import { clientRequestIdOf, decideResentErasure, type StoredErasure } from '../decider/resent-erasure';
import { erasurePositionsOfSession } from '../read-side/queries/erasure-query';

export { SESSION_ERASED, erasureStream } from '../events/erasure-events';

/** Erase `sessionId` of `tenantId`. */
export class EraseSessionCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    /**
     * Who ordered it, recorded in the erasure record it writes (an erasure answered from an earlier
     * record keeps that one's). A request id its client chose (`requestIdFrom` `client`) makes it
     * a resend of the erasure whose record carries the same id and key label (see `decideResentErasure`).
     */
    readonly requestedBy?: RequestedBy,
  ) {}
}

/** The `requestedBy` field of the record `command` writes: present only when the command says who ordered it. */
function requesterOf(command: EraseSessionCommand): Pick<SessionErasedData, 'requestedBy'> {
  return command.requestedBy ? { requestedBy: command.requestedBy } : {};
}

/** What an erasure answers: the session, how many stream events were removed, when, and the global position of its erasure record (decimal text). */
export interface EraseAnswer {
  sessionId: string;
  erasedEvents: number;
  erasedAt: string;
  /** Global position of the `SessionErased` record (decimal text): another replica's reads with it as `minPosition` no longer show the session. */
  position: string;
}

/**
 * How many times an erasure reads the session's revision and tries to delete at it, while other
 * writers' appends (conversation events, policies) keep landing, before it answers 409. Attempts
 * beaten only by compactions' decisions (the service's automatic passes after those appends) do
 * not count, up to {@link MAX_ERASE_ATTEMPTS_IN_ALL}.
 */
export const MAX_ERASE_ATTEMPTS = 8;

/** Most attempts of one erasure in all, decisions' races included (see {@link MAX_ERASE_ATTEMPTS}). */
export const MAX_ERASE_ATTEMPTS_IN_ALL = 64;

/** Most events read after a refused deletion's revision to tell another writer's from compactions' decisions. */
const RACED_EVENTS_READ = 16;

/**
 * How many times an erasure reads the tenant's erasure stream and appends its record at the
 * revision just read, while other erasures' records of the tenant keep landing, before it answers
 * 409 (the stream is deleted then: sending the erasure again writes the record).
 */
export const MAX_RECORD_ATTEMPTS = 64;

/**
 * Default of {@link ERASURE_RECORD_WAIT_MS} (ms): how long an erasure that finds the session's
 * stream already deleted and no record of that deletion waits for the erasure that deleted it to
 * write its record, before taking it for interrupted and writing the record itself.
 */
export const DEFAULT_ERASURE_RECORD_WAIT_MS = 2000;

/** Injection token of the erasure's record wait in ms (a number; default {@link DEFAULT_ERASURE_RECORD_WAIT_MS}). */
export const ERASURE_RECORD_WAIT_MS = Symbol('ERASURE_RECORD_WAIT_MS');

/** Erasure records read at a time when an erasure looks for the record of a life of the session. */
const ERASURE_RECORDS_PAGE = 256;

/** Erasure records read at a time from the end of the tenant's stream back to the read models' checkpoint (their lag: usually none or a few). */
const ERASURE_TAIL_PAGE = 32;

/** How long (ms) an erasure waits for this replica's projector to pass its record before it erases the read-model rows itself. */
const PROJECTOR_WAIT_MS = 5000;

/** Slices (ms) of {@link PROJECTOR_WAIT_MS}: between two, the erasure checks whether the projector found the read models' disk full. */
const PROJECTOR_WAIT_SLICE_MS = 100;

/** How long (ms) {@link EraseSessionHandler} tries to erase a session's rows itself while another connection holds the read models' lock. */
const ERASE_ROWS_LOCKED_MS = 1000;

/** ms between those tries. */
const ERASE_ROWS_RETRY_MS = 50;

/**
 * Most ids of the sequence {@link erasureRecordId} tries for one life of a session, each found
 * taken by the record of an earlier life ending at the same revision, before the erasure gives up
 * (500 `internal`; the session's stream is deleted, its record not written). Every such life needs
 * a rollback to a build before e92296e that wrote the session again from revision 0, so a log
 * reaching it is not expected.
 */
export const MAX_EARLIER_LIVES_AT_REVISION = 1024;

/**
 * The id of the erasure record of a life of session `sessionId` (of `tenantId`) whose last event
 * had revision `lastRevision` (bigint): the same for every erasure of that life, so the store
 * refuses a second record of it (SQLite, PostgreSQL: another content under the id). Pure.
 *
 * Revisions of a session id are never reused by the builds since e92296e, but a build before it
 * (a rollback) writes an erased session again from revision 0, so the log can hold several lives
 * of one session ending at the same revision. `earlierLives` (integer ≥ 0; default 0) is how many
 * ids of the sequence 0, 1, 2, … the records of such earlier lives already hold: an erasure tries
 * them in order, from 0, and takes the first one free, so every erasure of one life (at once, or
 * finishing an interrupted one) meets the same taken ids and derives the same id. 0 is the form
 * every build since 8f8d531 wrote: `<sessionId>\0erased\0<lastRevision>`; n ≥ 1 appends `\0<n>`.
 */
export function erasureRecordId(tenantId: string, sessionId: string, lastRevision: bigint, earlierLives = 0): string {
  const name = `${sessionId}\u0000erased\u0000${lastRevision}`;
  return deterministicEventId(erasureStream(tenantId), earlierLives === 0 ? name : `${name}\u0000${earlierLives}`);
}

/** An erasure record as stored: its global position (bigint) and its data. */
type ErasureRecord = StoredErasure;

/** What the tenant's erasure stream holds of one life of a session (see {@link EraseSessionHandler.recordOfLife}). */
interface LifeLookup {
  /** The record of the life, when written. */
  record: ErasureRecord | null;
  /** The stream's last revision when it was read (the expected revision of the next record), or `no_stream`. */
  tail: bigint | 'no_stream';
  /** Global position of the stream's last record when it was read (bigint; 0n when none): a record of the life written later comes after it. */
  tailPosition: bigint;
  /** The session's newest record not of the life, where the search stopped: one without `lastRevision` (written by a build before it was added) or one of a life ending at a lower revision; or null. */
  older: ErasureRecord | null;
}

/**
 * What {@link EraseSessionHandler.deleteAtRevision} found: the life it deleted, an empty stream, or
 * a stream in a later life than the one the erasure arrived in (`erasedSince`: that life was erased
 * by another erasure after this one arrived; this one deletes nothing).
 */
type Deletion = { first: bigint; last: { revision: bigint; position: bigint } } | { emptyAt: bigint; incarnation: bigint } | { erasedSince: bigint };

const recordOf = (event: RecordedEvent): ErasureRecord => ({ position: event.position, data: event.data as SessionErasedData });

/**
 * Handles {@link EraseSessionCommand}. The stream is deleted at the revision just read (an append
 * that lands meanwhile makes the deletion fail, and it is tried again, so that it goes too); the
 * record, appended after the deletion, names the global position and revision of the last deleted
 * event. Every replica's projector erases the session's rows when it reaches the record, in log
 * order: the deleted events all come before it, and it erases only rows projected from revisions up
 * to the record's `lastRevision` ({@link erasedRowsOf}), so an append to the same session id after
 * the deletion (a new stream continuing the revisions, before or after the record) is kept.
 *
 * One record per life of the session (a life: the revisions from its first event to the last one
 * deleted; builds since e92296e never reuse revisions): the record is appended at the erasure
 * stream's revision just read, after finding no record of that life in it, under an id derived from the life
 * ({@link erasureRecordId}); a record of the life written meanwhile (another erasure, on this
 * replica or another) makes the append fail, and the erasure answers with that record. A log a
 * build before e92296e wrote after a rollback can hold earlier lives of the session ending at the
 * same revision: their records hold the first ids of the sequence, and the erasure takes the next
 * one free (a taken id whose record is not this life's is never taken for a race). So every
 * erasure of one life, at once or later, answers the same: the record's `erasedEvents`,
 * `erasedAt` and position. A DELETE sent again under its client's own request id is recognised by
 * it ({@link decideResentErasure}: a record of the session carrying the same client-chosen request
 * id and key label) and answers that record, also after the session was written again; one
 * carrying no such id is decided as above, and so erases the life the session is in.
 */
@CommandHandler(EraseSessionCommand)
export class EraseSessionHandler implements ICommandHandler<EraseSessionCommand, EraseAnswer> {
  private readonly logger = new Logger('Erasure');
  /**
   * The records this handler's own appends wrote (by object identity, as {@link recordOnce} answers
   * them): a record found instead, written meanwhile by another erasure (in this process too, e.g.
   * a `DELETE` racing an append that begins the session's next life), is not the finishing call's
   * (newcomer ncapi73 F1: its log line said a replica had stopped).
   */
  private readonly appendedHere = new WeakSet<ErasureRecord>();

  constructor(
    @Inject(COMMAND_EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    private readonly projector: SessionProjector,
    @Optional() @Inject(ERASURE_RECORD_WAIT_MS) private readonly recordWaitMs: number = DEFAULT_ERASURE_RECORD_WAIT_MS,
    /** Told of the erasure ({@link SessionDecisionRecorded}); without it, nobody is. */
    @Optional() private readonly eventBus?: EventBus,
    /** Where this process's appends to the session see that it is being erased, and wait for it (see {@link ErasuresInProgress}); without it, they race it. */
    @Optional() @Inject(ErasuresInProgress) private readonly inProgress: ErasuresInProgress | null = null,
  ) {}

  /**
   * Whether this replica's projector passed global position `position` within {@link PROJECTOR_WAIT_MS},
   * or later while a worker thread is still applying the batch holding it (a long session's
   * erasure there takes seconds; erasing the same rows on the event loop meanwhile would hold it).
   * False at once while the projector cannot write the read models for want of space
   * (`readModelsFull`): waiting would only delay the DELETE's answer (newcomer ncdiskfull F1).
   */
  private async projectorPassed(position: bigint): Promise<boolean> {
    for (let waited = 0; ;) {
      // The projector cannot write the read models (their disk is full): it will not pass the record before space is freed.
      if (this.projector.readModelsFull() !== null && !this.projector.appliesInWorker(position)) return this.projector.checkpoint() >= position;
      if (await this.projector.waitForPosition(position, PROJECTOR_WAIT_SLICE_MS)) return true;
      waited += PROJECTOR_WAIT_SLICE_MS;
      if (waited < PROJECTOR_WAIT_MS) continue;
      if (!this.projector.appliesInWorker(position)) return false;
      waited = 0;
    }
  }

  /**
   * Erases the session and answers with the record of the life it erased. An erasure of a life
   * another erasure deleted (at once, or earlier: a resend after a lost answer) answers as that
   * one did, writing nothing; one whose stream was deleted by an erasure that stopped before its
   * record writes that record, once. It erases only the life the session was in when it arrived
   * ({@link checkWriteAdmission}): when another erasure deleted that life after it arrived (a DELETE
   * held on a slow replica while its client sent it again elsewhere, and maybe wrote the session
   * again), it answers as that erasure did and erases nothing of the later life. A DELETE sent
   * again under the client's own request id (`X-Request-Id`) answers the erasure that recorded it,
   * erasing nothing, whatever life the session is in now ({@link decideResentErasure}).
   * @throws SessionNotFoundError (404) when the session does not exist and was never erased.
   * @throws RequestExpiredError (503 `request_expired`) when its deletion could not start within its write deadline, or its client is gone: nothing erased.
   * @throws ErasureInterruptedError (409 `erasure_interrupted`) when appends landed {@link MAX_ERASE_ATTEMPTS} times in a row between reading the revision and deleting (nothing was erased), or other erasure records of the tenant landed {@link MAX_RECORD_ATTEMPTS} times in a row before this one's (send it again: it writes the record).
   */
  async execute(command: EraseSessionCommand): Promise<EraseAnswer> {
    const key = sessionKey(command.tenantId, command.sessionId);
    // The session's life as the erasure arrives, read before anything else: it erases that life or none.
    const arrivedIn = await lifeAtArrival(command, this.store, command.tenantId, command.sessionId);
    // A resend by the client's request id answers the erasure it resends, whatever life the session is in now.
    const resent = await this.resentErasure(command, arrivedIn);
    if (resent) return this.answerWith(command, resent);
    const deletion = () => this.deleteAtRevision(command, sessionStream(key), arrivedIn);
    const deleted = await (this.inProgress ? this.inProgress.run(key, deletion) : deletion());
    this.sessions.invalidate(key);
    this.eventBus?.publish(new SessionDecisionRecorded(command.tenantId, command.sessionId, 'erased'));
    const record =
      'erasedSince' in deleted
        ? await this.recordOfLifeErasedSince(command, deleted.erasedSince)
        : 'last' in deleted
          ? await this.recordOnce(
              command.tenantId,
              {
                sessionId: command.sessionId,
                // Revisions are gapless within a stream but a session written again after an erasure
                // continues after the erased revisions: count from the stream's first event.
                erasedEvents: Number(deleted.last.revision - deleted.first + 1n),
                erasedAt: new Date().toISOString(),
                lastPosition: deleted.last.position.toString(),
                lastRevision: deleted.last.revision.toString(),
                ...requesterOf(command),
              },
              deleted.last.position,
            )
          : await this.alreadyDeleted(command, deleted.emptyAt, deleted.incarnation);
    return this.answerWith(command, record);
  }

  /**
   * Finishes an erasure of session `sessionId` (of `tenantId`) that deleted the session's stream and
   * stopped before writing its record (its replica killed between the two; newcomer ncrace71 F1):
   * found by {@link InterruptedErasureSweep}, not sent by any client. When the stream's last
   * deletion (at its incarnation − 1) has no record once the record wait has passed (an erasure
   * still running writes its own within it), writes the record, with no `requestedBy`: every
   * replica's projector then erases the rows of the deleted life, and a life written since is kept.
   * Deletes nothing. Returns the record of that deletion and whether this call wrote it, or null
   * when the stream was never deleted or this replica holds no row of the deleted life (a replica
   * that does finishes it).
   * `known`: the stream's incarnation when the caller has just read it (bigint; else it is read here).
   */
  async finishInterrupted(tenantId: string, sessionId: string, known?: bigint): Promise<{ record: ErasureRecord; written: boolean } | null> {
    const incarnation = known ?? (await this.store.streamIncarnation(sessionStream(sessionKey(tenantId, sessionId))));
    if (incarnation === 0n) return null;
    try {
      const head = await this.store.headPosition();
      const record = await this.alreadyDeleted(new EraseSessionCommand(tenantId, sessionId), head, incarnation);
      return { record, written: this.appendedHere.has(record) };
    } catch (err) {
      if (err instanceof SessionNotFoundError) return null;
      throw err;
    }
  }

  /**
   * Finishes the erasure of the life of session `sessionId` (of `tenantId`) deleted up to revision
   * `incarnation` − 1 (bigint, > 0n) when it stopped before its record and this replica's read models
   * hold no row of it: called before the first event of the session's next life is appended
   * through a replica started after that life was deleted (a replaced pod; newcomer ncsweep72 F1:
   * the replicas that held the deleted events showed them merged into the new life until their
   * next sweep, up to a minute). The session's records are read ({@link erasuresOfSession}); when
   * none closes that life and none arrives within the record wait (an erasure still writing its
   * own), the record is written here, with no `requestedBy`, counting the life from the revision
   * after the session's previous record (0 without one) and with `lastPosition` the log's head read
   * before it (every event of the session up to there is of a deleted life: the new one is not
   * written yet). Every replica's projector then erases the rows of those revisions.
   * Returns the record of that life and whether this call wrote it (false: another erasure wrote it
   * within the record wait), or null when a record in the log closes that life already (then it is
   * not this rule's: the callers answer as before), or the session's records leave that life's first
   * revision unknown (a record without `lastRevision`; or, in logs of builds before e92296e, one of an
   * earlier life ending at that same revision; a replica holding the rows finishes it by its sweep).
   */
  async finishInterruptedNotHeld(tenantId: string, sessionId: string, incarnation: bigint): Promise<{ record: ErasureRecord; written: boolean } | null> {
    return this.recordOfUnheldLife(tenantId, sessionId, incarnation - 1n, {});
  }

  /**
   * The rule of {@link finishInterruptedNotHeld}, for the life of `sessionId` ending at `lastRevision`
   * (bigint), its record written with `requester` (none when no client asked: the first event of a
   * new life; the `DELETE`'s own when one is sent again through a replica holding no row of the
   * life, newcomer ncrecheck73 F2: it answered 404 and wrote nothing, and the replicas holding the
   * deleted events served them until their sweep).
   */
  private async recordOfUnheldLife(
    tenantId: string,
    sessionId: string,
    lastRevision: bigint,
    requester: Pick<SessionErasedData, 'requestedBy'>,
  ): Promise<{ record: ErasureRecord; written: boolean } | null> {
    const head = await this.store.headPosition();
    const records = await this.erasuresOfSession(tenantId, sessionId);
    // A record closing the life already (nothing to finish), or one that leaves where the life began unknown (a build before lastRevision).
    if (records.some((r) => r.data.lastRevision === undefined || r.data.lastRevision === lastRevision.toString())) return null;
    const waited = await this.waitForRecord(tenantId, sessionId, lastRevision, head);
    if (waited.record) return { record: waited.record, written: false };
    const firstRevision = records.reduce((first, r) => {
      const after = BigInt(r.data.lastRevision!) + 1n;
      return after > first ? after : first;
    }, 0n);
    const record = await this.recordOnce(
      tenantId,
      {
        sessionId,
        erasedEvents: Number(lastRevision - firstRevision + 1n),
        erasedAt: new Date().toISOString(),
        lastPosition: head.toString(),
        lastRevision: lastRevision.toString(),
        ...requester,
      },
      waited.tailPosition,
    );
    return { record, written: this.appendedHere.has(record) };
  }

  /**
   * The record of the erasure `command` resends under its client's request id, or null when it is
   * not a resend (also, at once and without a read, when it carries no client-chosen request id).
   * Loads the session's erasure records and decides ({@link decideResentErasure}); when the life
   * before the one it arrived in (`arrivedIn`, bigint incarnation) has no record yet, loads and
   * decides again at growing intervals (10 ms to 200 ms) for up to the record wait (the last load
   * begun at or after its end), then takes it for no resend. Writes nothing.
   */
  private async resentErasure(command: EraseSessionCommand, arrivedIn: bigint): Promise<ErasureRecord | null> {
    if (clientRequestIdOf(command.requestedBy) === undefined) return null;
    const deadline = Date.now() + this.recordWaitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const lookedAt = Date.now();
      const decision = decideResentErasure(command, await this.erasuresOfSession(command.tenantId, command.sessionId), arrivedIn);
      if (decision.kind === 'resent') return decision.record;
      if (decision.kind === 'erase' || lookedAt >= deadline) return null;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))));
    }
  }

  /**
   * Every erasure record of session `sessionId` of `tenantId` in the log now, in no set order, read
   * so that one written through another replica is found whatever this replica's read models lag:
   * those after the read models' checkpoint are read from the end of the tenant's erasure stream
   * back to it ({@link ERASURE_TAIL_PAGE} at a time: the lag), those up to it are found in the
   * `erasures` read model by session (its rows are complete up to the checkpoint) and read from the
   * store by position (`eventAt`, one read each: the read model keeps no `requestedBy`). Read models
   * of another log count for nothing: the whole stream is read then.
   */
  private async erasuresOfSession(tenantId: string, sessionId: string): Promise<ErasureRecord[]> {
    const upTo = this.projector.readModelsOffLog() === null ? this.projector.checkpoint() : 0n;
    const indexed = upTo === 0n ? [] : erasurePositionsOfSession(this.projector.store, tenantId, sessionId, upTo);
    const records: ErasureRecord[] = [];
    for await (const event of this.recordsNewestFirst(tenantId, ERASURE_TAIL_PAGE)) {
      if (event.position <= upTo) break;
      if (event.type === SESSION_ERASED && (event.data as SessionErasedData).sessionId === sessionId) records.push(recordOf(event));
    }
    const stream = erasureStream(tenantId);
    for (const position of indexed) {
      const event = await this.store.eventAt(position);
      if (event?.streamId === stream && event.type === SESSION_ERASED) records.push(recordOf(event));
    }
    return records;
  }

  /** The answer of an erasure whose record is `record`, once this replica's read models hold no row of the life it closed. */
  private async answerWith(command: EraseSessionCommand, record: ErasureRecord): Promise<EraseAnswer> {
    // Reads after this answer see no row of the session: this replica's projector erases them at
    // the record. If it lags, the rows it projected from the deleted events are erased here (an
    // append to the same id after the deletion is not one of them, and is kept).
    if (!(await this.projectorPassed(record.position))) await this.eraseRowsHere(command, record);
    const { sessionId, erasedEvents, erasedAt } = record.data;
    return { sessionId, erasedEvents, erasedAt, position: record.position.toString() };
  }

  /**
   * Erases the rows of the life `record` closed from this replica's read models, for a projector
   * that has not reached the record ({@link answerWith}). Each try waits at most
   * {@link EVENT_LOOP_LOCK_WAIT_MS} for another connection's write lock on the read models (this
   * runs on the event loop: SQLite's 5 s busy wait held every request, and the DELETE then answered
   * 500), and they are tried again every {@link ERASE_ROWS_RETRY_MS} for up to
   * {@link ERASE_ROWS_LOCKED_MS} without blocking (a long session's erasure in the projector's worker
   * thread holds the lock for seconds). When the lock is still held then (another process holds it),
   * the erasure is answered anyway: it is in the log, reads of the session wait for its record (this
   * process acknowledged it), and the projector erases the rows there once the lock is released; one
   * warn line says so. The same when the read models cannot be written, their disk full or their file's I/O failing (`isReadModelsUnwritable`: it
   * answered 500 after 5 s, the erasure being in the log; newcomer ncdiskfull F1), without retries.
   * @throws what the erasure throws but `SQLITE_BUSY` and a full disk.
   */
  private async eraseRowsHere(command: EraseSessionCommand, record: ErasureRecord): Promise<void> {
    const until = performance.now() + ERASE_ROWS_LOCKED_MS;
    for (;;) {
      try {
        this.projector.eraseSession(command.tenantId, command.sessionId, erasedRowsOf(record.data), EVENT_LOOP_LOCK_WAIT_MS);
        return;
      } catch (error) {
        if (isReadModelsUnwritable(error)) {
          this.logger.warn(
            `the erasure of session ${quoteInput(command.sessionId)} is recorded at position ${record.position}, but the read models cannot be written (${unwritableForFullDisk((error as Error).message) ? 'the disk holding them is full' : 'reading or writing them fails'}: ${(error as Error).message}): its rows stay in them until the projector reaches the record once ${unwritableForFullDisk((error as Error).message) ? 'space is freed' : 'that is fixed'} (reads of the session wait for it)`,
          );
          return;
        }
        if (!isReadModelsLocked(error)) throw error;
      }
      if (this.projector.checkpoint() >= record.position) return;
      if (performance.now() >= until) {
        this.logger.warn(
          `the erasure of session ${quoteInput(command.sessionId)} is recorded at position ${record.position}, but the read models are locked by another connection: its rows stay in them until the projector reaches the record once the lock is released (reads of the session wait for it)`,
        );
        return;
      }
      await sleep(ERASE_ROWS_RETRY_MS);
    }
  }

  /**
   * The record of the life `data` describes (`data.lastRevision` set): the one already in the
   * tenant's erasure stream, else `data` appended at the stream's revision just read under
   * {@link erasureRecordId}, and read back as stored. `after`: a global position no record of this
   * life can be at or before (the last deleted event's, or where an earlier search of the stream
   * ended), so the search stops there; undefined searches back to the session's previous record.
   *
   * A failed append is told apart by its cause. Another record appended meanwhile (of this life or
   * of another session: WrongExpectedRevisionError) makes it read the stream again. The id taken
   * (DuplicateEventIdError) is either this life's record, written meanwhile by another erasure of
   * it (the search after it finds that record, which answers), or the record of an earlier life of
   * the session ending at the same revision (a life written again from revision 0 by a build
   * before e92296e, after a rollback: the search finds nothing, since that record comes before this
   * life's events): the next id of the sequence is tried, without counting as a race.
   * @throws ErasureInterruptedError after {@link MAX_RECORD_ATTEMPTS} appends beaten by other records.
   * @throws Error when all {@link MAX_EARLIER_LIVES_AT_REVISION} ids of the sequence are taken by other lives' records.
   */
  private async recordOnce(tenantId: string, data: SessionErasedData, after?: bigint): Promise<ErasureRecord> {
    const lastRevision = BigInt(data.lastRevision!);
    const stream = erasureStream(tenantId);
    let earlierLives = 0;
    for (let raced = 0; ;) {
      const found = await this.recordOfLife(tenantId, data.sessionId, lastRevision, after);
      if (found.record) return found.record;
      const id = erasureRecordId(tenantId, data.sessionId, lastRevision, earlierLives);
      try {
        const appended = await this.store.appendToStream(stream, [{ id, type: SESSION_ERASED, data }], { expectedRevision: found.tail });
        // Answer what the store holds there (a store that takes a known id for a replay answers without writing).
        const [stored] = await this.store.readStream(stream, { fromRevision: appended.nextExpectedRevision, maxCount: 1 });
        const record = stored ? recordOf(stored) : { position: appended.position, data };
        this.appendedHere.add(record);
        return record;
      } catch (err) {
        if (err instanceof DuplicateEventIdError) {
          // This life's record, written meanwhile, is found by the next search; else the id is an earlier life's.
          const mine = await this.recordOfLife(tenantId, data.sessionId, lastRevision, after);
          if (mine.record) return mine.record;
          if (++earlierLives >= MAX_EARLIER_LIVES_AT_REVISION)
            throw new Error(
              `the erasure of session ${data.sessionId} deleted its events up to revision ${lastRevision} but found all ${MAX_EARLIER_LIVES_AT_REVISION} ids of its record taken by records of other lives of the session: not recorded, its read models still hold it`,
              { cause: err },
            );
          continue;
        }
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (++raced >= MAX_RECORD_ATTEMPTS)
          throw new ErasureInterruptedError(
            `other erasures of the tenant were recorded ${raced} times in a row while this one's record was being written; the session is deleted but its erasure not yet recorded: send the DELETE again to record it`,
          );
      }
    }
  }

  /**
   * Searches the tenant's erasure stream backwards for the record of the life of `sessionId`
   * ending at revision `lastRevision` (bigint). Stops at a record at or before position `after`
   * (when given), at a record of a life of the session ending at a lower revision (revisions are
   * not reused since e92296e: the records of a session's lives come in order), at the session's
   * newest record without `lastRevision` (both `older`), or at the stream's start. The newest
   * record ending at `lastRevision` is taken for the life's: the caller checks it against the read
   * models when an earlier life may have ended there too. Reads 256 records at a time.
   */
  private async recordOfLife(tenantId: string, sessionId: string, lastRevision: bigint, after?: bigint): Promise<LifeLookup> {
    const stream = erasureStream(tenantId);
    let from: bigint | 'end' = 'end';
    let tail: bigint | 'no_stream' | undefined;
    let tailPosition = 0n;
    for (;;) {
      const page = await this.store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: ERASURE_RECORDS_PAGE });
      if (tail === undefined) [tail, tailPosition] = page[0] ? [page[0].revision, page[0].position] : ['no_stream', 0n];
      const none = { record: null, tail, tailPosition, older: null };
      for (const event of page) {
        if (after !== undefined && event.position <= after) return none;
        const data = event.data as SessionErasedData;
        if (event.type !== SESSION_ERASED || data.sessionId !== sessionId) continue;
        if (data.lastRevision === undefined) return { ...none, older: recordOf(event) };
        const life = BigInt(data.lastRevision);
        if (life === lastRevision) return { ...none, record: recordOf(event) };
        if (life < lastRevision) return { ...none, older: recordOf(event) };
      }
      const oldest = page.at(-1);
      if (page.length < ERASURE_RECORDS_PAGE || !oldest || oldest.revision === 0n) return none;
      from = oldest.revision - 1n;
    }
  }

  /**
   * An erasure that found the stream empty (`emptyAt`: the log's head read before; `incarnation`:
   * the stream's, read after). The life last deleted ends at revision `incarnation - 1`: its record
   * answers (a resend after a lost answer, or an erasure at once with the one that deleted it),
   * unless this replica's read models hold rows of revisions up to it projected after that record:
   * then the record is of an earlier life ending at the same revision and the life deleted last (one
   * a build before e92296e wrote again from revision 0) has none yet. Without one, the erasure that
   * deleted the stream may be about to write it: it is waited for up to the record wait. When
   * none comes and this replica's read models hold rows of that life, the deletion was
   * interrupted (the store failed, the process ended before the record): the record is written now, counting the life's revisions from the first one the read models hold
   * to `incarnation - 1` (exact also when this replica had not read the life's last events), or,
   * for a life written again from revision 0 after an earlier life's record ending at
   * `incarnation - 1` (that life set it, and this one may have ended lower), to the last one they
   * hold, so every replica erases the rows. Its `lastRevision` is exact (the
   * stream's incarnation - 1) and bounds every replica's erasure: a replica that had projected
   * more of the life than this one erases all of it. Its `lastPosition` is the last this replica
   * holds (lower than the life's when it lagged), read only by builds that bound the erasure by
   * position. A record of the life written while this erasure looks (the erasure that deleted the
   * stream, at once with this one on another replica) answers also when this replica's projector
   * has meanwhile erased the life's rows at it: this replica then holds none of them (newcomer
   * ncrace74 F3: the previous life's record answered, or 404). With nothing left to erase and no
   * record of the life within the record wait, the session's newest record of another life answers: one
   * written by a build without `lastRevision`, or one of a life ending below `incarnation - 1` (the
   * stores keep the highest revision erased, which a life written again from revision 0 by a build
   * before e92296e may not reach).
   * @throws SessionNotFoundError when neither a record nor rows of the session exist.
   */
  private async alreadyDeleted(command: EraseSessionCommand, emptyAt: bigint, incarnation: bigint): Promise<ErasureRecord> {
    const { tenantId, sessionId } = command;
    if (incarnation === 0n) return this.neverDeleted(command, emptyAt);
    const lastRevision = incarnation - 1n;
    const found = await this.recordOfLife(tenantId, sessionId, lastRevision);
    await this.projector.waitForPosition(emptyAt, PROJECTOR_WAIT_MS);
    // A record of the revision closes this life unless rows of its revisions were projected after
    // it: those are of a later life ending there too (written again from revision 0 by a build
    // before e92296e), deleted without its own record, which is written below.
    if (found.record && !loggedLifeUpTo(this.projector.store, tenantId, sessionId, lastRevision, found.record.position)) return found.record;
    if (!loggedLifeUpTo(this.projector.store, tenantId, sessionId, lastRevision)) {
      // Nothing of the life here (this replica started after its deletion): its record when the session's records
      // tell where it began and none closes it yet (the deletion interrupted), written now, as a new life's first event does.
      const unheld = await this.recordOfUnheldLife(tenantId, sessionId, lastRevision, requesterOf(command));
      if (unheld) return unheld.record;
      // The life's record written since `found` was read: the erasure that deleted the stream (at once with
      // this one, on another replica) recorded it, and this replica's projector erased the life's rows at
      // it, so they were not here (newcomer ncrace74 F3: `found.older`, the previous life's record, answered).
      const since = await this.recordOfLife(tenantId, sessionId, lastRevision, found.tailPosition);
      if (since.record) return since.record;
      if (found.older) {
        // Erased by a build that did not record the life, or a life ending below the highest revision
        // erased (one written again from revision 0 by a build before e92296e): the session's newest
        // record answers, when nothing is left to erase, once no record of the life came within the
        // record wait (an erasure that deleted the stream meanwhile may be writing it).
        const awaited = await this.waitForRecord(tenantId, sessionId, lastRevision, since.tailPosition);
        return awaited.record ?? found.older;
      }
    }
    const waited = await this.waitForRecord(tenantId, sessionId, lastRevision, found.tailPosition);
    if (waited.record) return waited.record;
    const life = loggedLifeUpTo(this.projector.store, tenantId, sessionId, lastRevision, found.record?.position);
    if (!life) {
      // The life's record landed after the wait's last look, and this replica's projector erased the rows at it.
      const late = await this.recordOfLife(tenantId, sessionId, lastRevision, waited.tailPosition);
      if (late.record) return late.record;
      throw new SessionNotFoundError(sessionId);
    }
    // The life ends at `lastRevision` (the highest revision ever deleted) unless it was written again
    // from revision 0 and an earlier life's record claims that revision: then it ends at its last row.
    const earlierEndedThere =
      life.firstRevision === 0n && (found.record !== null || (found.older !== null && (await this.anyRecordEndingAt(tenantId, sessionId, lastRevision))));
    return this.recordOnce(
      tenantId,
      {
        sessionId,
        erasedEvents: Number((earlierEndedThere ? life.lastRevision : lastRevision) - life.firstRevision + 1n),
        erasedAt: new Date().toISOString(),
        lastPosition: life.lastPosition.toString(),
        lastRevision: lastRevision.toString(),
        ...requesterOf(command),
      },
      waited.tailPosition,
    );
  }

  /**
   * Whether the tenant's erasure stream holds a record of `sessionId` closing a life that ended at
   * revision `lastRevision` (bigint). Called when this replica holds rows of a life the stream has
   * no record of, written again from revision 0: such a record is an earlier life's, which set the
   * store's highest deleted revision, so the life being finished may have ended below it. Reads the
   * whole stream, newest first, when there is none.
   */
  private async anyRecordEndingAt(tenantId: string, sessionId: string, lastRevision: bigint): Promise<boolean> {
    for await (const event of this.recordsNewestFirst(tenantId)) {
      const data = event.data as SessionErasedData;
      if (event.type === SESSION_ERASED && data.sessionId === sessionId && data.lastRevision === lastRevision.toString()) return true;
    }
    return false;
  }

  /** The events of the tenant's erasure stream, newest first, read `pageSize` at a time (default {@link ERASURE_RECORDS_PAGE}). */
  private async *recordsNewestFirst(tenantId: string, pageSize = ERASURE_RECORDS_PAGE): AsyncGenerator<RecordedEvent> {
    const stream = erasureStream(tenantId);
    let from: bigint | 'end' = 'end';
    for (;;) {
      const page = await this.store.readStream(stream, { direction: 'backwards', fromRevision: from, maxCount: pageSize });
      yield* page;
      const oldest = page.at(-1);
      if (page.length < pageSize || !oldest || oldest.revision === 0n) return;
      from = oldest.revision - 1n;
    }
  }

  /**
   * Waits up to the record wait for the record of the life ending at `lastRevision` to be
   * appended after position `after`, reading the stream's tail at growing intervals (10 ms to
   * 200 ms), the last read begun at or after the end of the wait (one begun before it and ending
   * after, as the record landed, is not the last: newcomer ncrace74 F3). Returns the last lookup
   * (its `tailPosition`: where the next search may stop).
   */
  private async waitForRecord(tenantId: string, sessionId: string, lastRevision: bigint, after: bigint): Promise<LifeLookup> {
    const deadline = Date.now() + this.recordWaitMs;
    let delay = 10;
    let lookup: LifeLookup = { record: null, tail: 'no_stream', tailPosition: after, older: null };
    for (let lookedAt = Date.now(); lookedAt < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))));
      delay = Math.min(delay * 2, 200);
      lookedAt = Date.now();
      const next = await this.recordOfLife(tenantId, sessionId, lastRevision, lookup.tailPosition);
      if (next.record) return next;
      if (next.tail !== 'no_stream') lookup = next;
    }
    return lookup;
  }

  /**
   * An empty stream the store never deleted (incarnation 0n): a session id never written (404),
   * or one erased by a build before e92296e (which removed deleted streams' revisions). Its newest
   * record up to `emptyAt` answers when this replica's read models hold nothing of the session;
   * rows left by such an erasure interrupted before its record get a record now.
   * @throws SessionNotFoundError when there is neither.
   */
  private async neverDeleted(command: EraseSessionCommand, emptyAt: bigint): Promise<ErasureRecord> {
    const { tenantId, sessionId } = command;
    await this.projector.waitForPosition(emptyAt, PROJECTOR_WAIT_MS);
    const last = lastLoggedPositionUpTo(this.projector.store, tenantId, sessionId, emptyAt);
    if (last !== null) {
      const data: SessionErasedData = {
        sessionId,
        erasedEvents: 0,
        erasedAt: new Date().toISOString(),
        lastPosition: last.toString(),
        ...requesterOf(command),
      };
      const appended = await this.store.appendToStream(erasureStream(tenantId), [{ id: randomUUID(), type: SESSION_ERASED, data }]);
      return { position: appended.position, data };
    }
    for await (const e of this.recordsNewestFirst(tenantId))
      if (e.type === SESSION_ERASED && (e.data as SessionErasedData).sessionId === sessionId && e.position <= emptyAt) return recordOf(e);
    throw new SessionNotFoundError(sessionId);
  }

  /**
   * The record of the life of the session an erasure arrived in (`arrivedIn`: its incarnation, the
   * revision it starts at), which another erasure deleted after this one arrived (the session may
   * have been written again since: that later life is not this erasure's to delete). That life's
   * record is the session's oldest one ending at or after `arrivedIn` (the records of a session's
   * lives come in order); this erasure answers as that one did, writing nothing. Waits up to the
   * record wait for it when the erasure that deleted the life has not written it yet (the last
   * read begun at or after the end of the wait).
   * @throws ErasureInterruptedError when no record of that life is found (the erasure that deleted
   *   it stopped before writing it, and the session was written again since): nothing more is erased.
   */
  private async recordOfLifeErasedSince(command: EraseSessionCommand, arrivedIn: bigint): Promise<ErasureRecord> {
    const deadline = Date.now() + this.recordWaitMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      const lookedAt = Date.now();
      let oldest: ErasureRecord | null = null;
      for await (const event of this.recordsNewestFirst(command.tenantId)) {
        const data = event.data as SessionErasedData;
        if (event.type !== SESSION_ERASED || data.sessionId !== command.sessionId) continue;
        if (data.lastRevision === undefined || BigInt(data.lastRevision) < arrivedIn) break;
        oldest = recordOf(event);
      }
      if (oldest) return oldest;
      if (lookedAt >= deadline)
        throw new ErasureInterruptedError(
          `the session was erased by another erasure after this one arrived, and that erasure's record is not written: nothing was erased by this one (a later life of the session is not its to erase); send the DELETE again to erase the session as it is now`,
        );
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))));
    }
  }

  /**
   * Deletes `stream` at the revision of its last event, just read; returns the revision of its
   * first event and the last event's revision and global position, or, when the stream has no
   * event, `emptyAt` (the log's head read before finding it empty) and the stream's incarnation
   * read after (the revision after its last deleted one; 0n when the store never deleted it).
   */
  private async deleteAtRevision(command: EraseSessionCommand, stream: string, arrivedIn: bigint): Promise<Deletion> {
    let writersRaced = 0;
    for (let attempt = 1; ; attempt++) {
      const logHead = await this.store.headPosition();
      const [last] = await this.store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
      // Read after `last`: a life that began before this read ends after `last` was read, so a
      // deletion at `last`'s revision in another life than this one fails (revisions are not reused).
      const life = await this.store.streamIncarnation(stream);
      if (life > arrivedIn) return { erasedSince: arrivedIn };
      if (!last) return { emptyAt: logHead, incarnation: life };
      const revision = last.revision;
      // Appends only add after `last`, and a deletion at `revision` fails if one did: the first
      // event read now is the first one deleted.
      const [head] = await this.store.readStream(stream, { fromRevision: 'start', maxCount: 1 });
      // The one rule of when a write may still start (client there, within its deadline, in the life it arrived in), right before it.
      checkWriteAdmission(command, command.sessionId, { atArrival: arrivedIn, now: life }, performance.now());
      try {
        await this.store.deleteStream(stream, { expectedRevision: revision });
        // what the store keeps for the session's claim (SQLite: a lock file named by a hash of the session) goes too
        await this.store.forgetClaim?.(sessionClaimName(command.tenantId, command.sessionId));
        return { first: head?.revision ?? revision, last };
      } catch (err) {
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        // What beat the deletion: only compactions' decisions (the service's own passes) do not count as another writer.
        const raced = await this.store.readStream(stream, { fromRevision: revision + 1n, maxCount: RACED_EVENTS_READ });
        if (raced.length === 0 || raced.some((e) => !isCompactionDecision(e.type))) writersRaced++;
        if (writersRaced >= MAX_ERASE_ATTEMPTS || attempt >= MAX_ERASE_ATTEMPTS_IN_ALL)
          throw new ErasureInterruptedError(
            writersRaced === attempt
              ? `other writers appended to the session each of the ${attempt} times this erasure tried to delete it; nothing was erased: send the DELETE again, best once the session's writers have stopped`
              : `other writers appended to the session ${writersRaced} times in a row while it was being erased (${attempt} attempts in all; the others were beaten by the service's own compaction decisions); nothing was erased: send the DELETE again, best once the session's writers have stopped`,
          );
      }
    }
  }
}
