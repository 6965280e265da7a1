/**
 * Erasures interrupted between their two writes: a `DELETE` deletes the session's stream, then
 * appends its record to the tenant's erasure stream, and every replica's projector erases the
 * session's rows when it reaches that record. A replica killed between the two (newcomer ncrace71
 * F1: 2 kills in 12 landed there) left the deleted events in every replica's read models, served by
 * the window, recall and the session list, and merged into the session's next life, until a client
 * sent the `DELETE` again. {@link InterruptedErasureSweep} finds such deletions and writes their
 * records, on every replica: at start, once the read models have caught up with the log, and then
 * every {@link ERASURE_SWEEP_INTERVAL_MS}.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type Database from 'better-sqlite3';
import type { EventStore } from '@lib/event-store';
import type { StoredErasure } from '../decider/resent-erasure';
import { SESSION_STREAM_PREFIX, sessionKey, sessionStream } from '../events/session-stream-events';
import { loggedLifeUpTo } from '../read-side/queries/session-row';
import { SessionProjector } from '../read-side/session-projector';
import { ERASURE_SWEEP_CHECKPOINT } from '../read-side/read-model-store';
import { COMMAND_EVENT_STORE } from '../tokens';
import { EraseSessionHandler } from './erase-session';

/** How often (ms) each replica looks for erasures interrupted after their deletion: every minute. */
export const ERASURE_SWEEP_INTERVAL_MS = 60_000;

/** Deleted streams a sweep looks up in the read models between two turns of the event loop. */
const SWEEP_LOOKUPS_PER_TURN = 1_000;

/** How many finished records' positions a replica remembers, so that it logs each once. */
const LOGGED_RECORDS_KEPT = 1_000;

/**
 * The sessions (tenant and session id) whose last event projected into `db`'s read models is after
 * global position `after` (bigint): read tenant by tenant through the index `sessions_by_activity`
 * (tenant, last position), each tenant found by one index seek, so the cost follows the tenants and
 * the sessions active, not every session. Pure read.
 */
export function sessionsActiveAfter(db: Database.Database, after: bigint): Array<{ tenantId: string; sessionId: string }> {
  const nextTenant = db.prepare<[string], string | null>('SELECT min(tenant_id) FROM sessions WHERE tenant_id > ?').pluck();
  const activeOf = db.prepare<[string, bigint], { sessionId: string }>(
    'SELECT session_id AS sessionId FROM sessions WHERE tenant_id = ? AND last_position > ?',
  );
  const active: Array<{ tenantId: string; sessionId: string }> = [];
  for (let tenant = nextTenant.get(''); typeof tenant === 'string'; tenant = nextTenant.get(tenant))
    for (const { sessionId } of activeOf.all(tenant, after)) active.push({ tenantId: tenant, sessionId });
  return active;
}

/** An erasure a sweep finished: the session, and the record's `lastRevision` and global position (decimal text). */
export interface FinishedErasure {
  tenantId: string;
  sessionId: string;
  lastRevision: string;
  position: string;
}

/**
 * The tenant and session id of a session stream's name (`session-<tenantId>.<sessionId>`; tenant
 * ids hold no dot), or null for any other stream. Pure.
 */
export function sessionOfStream(stream: string): { tenantId: string; sessionId: string } | null {
  if (!stream.startsWith(SESSION_STREAM_PREFIX)) return null;
  const key = stream.slice(SESSION_STREAM_PREFIX.length);
  const dot = key.indexOf('.');
  return dot <= 0 || dot === key.length - 1 ? null : { tenantId: key.slice(0, dot), sessionId: key.slice(dot + 1) };
}

/**
 * Finds the session streams the store deleted whose deleted events this replica's read models still
 * hold, and finishes their erasures ({@link EraseSessionHandler.finishInterrupted}: the record is
 * written once the record wait has passed without one; a record already written, its projector
 * behind it, is left to the projector). One sweep at a time; each finished erasure logs a warn line.
 * Needs a store that lists its deleted streams (SQLite, PostgreSQL: `logCopy().deletedStreams()`);
 * on KurrentDB there is no sweep, and an interrupted erasure is finished by sending it again.
 */
@Injectable()
export class InterruptedErasureSweep {
  private readonly logger = new Logger('Erasure');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<FinishedErasure[]> | undefined;
  private stopped = false;
  /** Positions of the records this process logged as finished (the latest {@link LOGGED_RECORDS_KEPT}). */
  private readonly logged = new Set<string>();
  /** The read models' checkpoint when the last sweep began (at start: when the sweeping started): sessions active after it are looked at. */
  private activeAfter: bigint | undefined;

  constructor(
    @Inject(COMMAND_EVENT_STORE) private readonly store: EventStore,
    private readonly projector: SessionProjector,
    private readonly erasures: EraseSessionHandler,
  ) {}

  /**
   * Sweeps once (or joins the sweep under way) and answers the erasures it finished. Reads the
   * store's deleted streams (one query) and, for each session stream, whether the read models hold
   * rows of its deleted revisions (one indexed read-model query); only those cost store reads. Then
   * the sessions active since the last sweep ({@link sweepWrittenAgain}: one store read each).
   * @throws what the store throws (unavailable): the next sweep tries again.
   */
  sweep(): Promise<FinishedErasure[]> {
    this.running ??= this.sweepOnce().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * Starts sweeping: once the read models have reached the log's head as it is now (waiting at most
   * `intervalMs` for it), then every `intervalMs` (default {@link ERASURE_SWEEP_INTERVAL_MS}). A
   * failed sweep logs one warn line and the next one tries again. Nothing without a store that lists its deleted streams.
   */
  start(intervalMs = ERASURE_SWEEP_INTERVAL_MS): void {
    if (!this.store.logCopy || this.timer || this.stopped) return;
    // sessions active since this replica's last sweep (before a restart too: its checkpoint), or since its start, are looked at by the first sweep
    const swept = this.projector.store.readCheckpoint(ERASURE_SWEEP_CHECKPOINT);
    this.activeAfter ??= swept > 0n ? swept : this.projector.checkpoint();
    const run = () =>
      void this.sweep().catch((err: unknown) =>
        this.logger.warn(`looking for erasures interrupted after their deletion failed (tried again in ${intervalMs / 1000} s): ${String(err)}`),
      );
    void this.store
      .headPosition()
      .then((head) => this.projector.waitForPosition(head, intervalMs))
      .catch(() => undefined)
      .then(() => {
        if (this.stopped) return;
        run();
        this.timer = setInterval(run, intervalMs);
        this.timer.unref();
      });
  }

  /** Stops sweeping and waits for a sweep under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async sweepOnce(): Promise<FinishedErasure[]> {
    const copy = this.store.logCopy?.();
    if (!copy) return [];
    const finished: FinishedErasure[] = [];
    // most deleted streams were erased whole: their session has no read-model row left (a key lookup)
    const known = this.projector.store.db.prepare<[string], 1>('SELECT 1 FROM sessions WHERE session_key = ?').pluck();
    let looked = 0;
    for (const { stream, revision } of await copy.deletedStreams()) {
      if (this.stopped) break;
      // the lookups run on the event loop: give it back between runs of them
      if (++looked % SWEEP_LOOKUPS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
      const session = sessionOfStream(stream);
      if (!session || known.get(stream.slice(SESSION_STREAM_PREFIX.length)) === undefined) continue;
      const done = await this.finishHeld(session.tenantId, session.sessionId, revision + 1n);
      if (done) finished.push(done);
    }
    for (const done of await this.sweepWrittenAgain()) finished.push(done);
    return finished;
  }

  /**
   * The sessions active since the last sweep whose stream began a new life over a deletion this
   * replica's read models still hold rows of (its incarnation, from the store, above a revision they
   * hold), finished as {@link sweepOnce} finishes deleted streams. PostgreSQL clears a stream's
   * deleted mark when it is written again, so a new life first written through a replica that never
   * held the deleted events left them in the other replicas (newcomer ncrecheck71 R1); a new life
   * is activity, which this finds within a sweep. One store read per session active since the last
   * sweep, none before the first sweep started ({@link start}).
   */
  private async sweepWrittenAgain(): Promise<FinishedErasure[]> {
    const after = this.activeAfter;
    this.activeAfter = this.projector.checkpoint();
    if (after === undefined) return [];
    const active = sessionsActiveAfter(this.projector.store.db, after);
    const finished: FinishedErasure[] = [];
    try {
      for (const { tenantId, sessionId } of active) {
        // stopped before it looked at them all: the next start looks from the last complete sweep
        if (this.stopped) return finished;
        const incarnation = await this.store.streamIncarnation(sessionStream(sessionKey(tenantId, sessionId)));
        const done = await this.finishHeld(tenantId, sessionId, incarnation);
        if (done) finished.push(done);
      }
      // Every session active before this sweep began is looked at: a restart looks from here (a busy file: the next sweep records it).
      this.projector.store.tryWriteCheckpoint(ERASURE_SWEEP_CHECKPOINT, this.activeAfter);
    } catch (err) {
      // the store failed: the next sweep looks at these sessions again
      this.activeAfter = after;
      throw err;
    }
    return finished;
  }

  /**
   * Before the first event of a new life of session `sessionId` is appended (the stream was
   * deleted at `incarnation` − 1; bigint), finishes the erasure of the life before when it was
   * interrupted, so that the new life is never shown merged with the deleted one on any replica (on
   * PostgreSQL a stream written again is no longer marked deleted, so the sweep would not find it
   * at once). When this replica holds rows of that life, as {@link finishHeld}; when it holds none
   * (it started after the deletion: newcomer ncsweep72 F1), it reads the session's erasure records
   * ({@link EraseSessionHandler.finishInterruptedNotHeld}) and writes the missing one. The usual case,
   * an erasure that wrote its record: a local read-model query, then a read of the records (the
   * erasure stream's tail past the read models' checkpoint, and one store read per earlier record
   * of the session). Up to the record wait (2 s) when no record closes the life yet.
   * @throws what the store throws: the append fails and nothing of it is written.
   */
  async finishBeforeNewLife(tenantId: string, sessionId: string, incarnation: bigint): Promise<void> {
    if (loggedLifeUpTo(this.projector.store, tenantId, sessionId, incarnation - 1n)) await this.finishHeld(tenantId, sessionId, incarnation);
    else this.logFinished(tenantId, sessionId, await this.erasures.finishInterruptedNotHeld(tenantId, sessionId, incarnation));
  }

  /**
   * The one rule of every path here: when the session's stream was deleted up to `incarnation` − 1
   * (bigint; 0n: never deleted) and this replica's read models still hold rows of those revisions,
   * finishes that erasure ({@link EraseSessionHandler.finishInterrupted}, given the incarnation);
   * logs and answers it when this call wrote its record, else null.
   */
  private async finishHeld(tenantId: string, sessionId: string, incarnation: bigint): Promise<FinishedErasure | null> {
    if (incarnation === 0n || !loggedLifeUpTo(this.projector.store, tenantId, sessionId, incarnation - 1n)) return null;
    return this.logFinished(tenantId, sessionId, await this.erasures.finishInterrupted(tenantId, sessionId, incarnation));
  }

  /** Logs the erasure `done` finished (once per record in this process) and answers it, when this replica wrote its record; else null. */
  private logFinished(tenantId: string, sessionId: string, done: { record: StoredErasure; written: boolean } | null): FinishedErasure | null {
    if (!done?.written) return null;
    const { lastRevision = '?', erasedEvents } = done.record.data;
    const position = done.record.position.toString();
    // the sweep and a new life's first append may finish the same one at once: one line per record (newcomer ncrecheck71 R2)
    if (this.logged.has(position)) return null;
    this.logged.add(position);
    if (this.logged.size > LOGGED_RECORDS_KEPT) this.logged.delete(this.logged.values().next().value as string);
    this.logger.warn(
      `finished the erasure of session "${sessionId}" of tenant ${tenantId}, interrupted after its deletion (its replica stopped before recording it): ` +
        `its record of ${erasedEvents} events up to revision ${lastRevision} is in the log now (position ${done.record.position}; another replica finishing it at the same time logs it too), and every replica's read models drop them`,
    );
    return { tenantId, sessionId, lastRevision, position };
  }
}
