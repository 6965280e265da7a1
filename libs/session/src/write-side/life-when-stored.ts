/**
 * The session life a queued command belongs to (newcomer ncnats66 F1, high): a NATS command is stored in the command
 * stream when it is published, and may wait there behind the session's earlier commands. The life read when a replica
 * receives it ({@link readSessionLife}) is the life current then: a backlog published before an HTTP erasure and received
 * after it landed was applied to the session's next life (20 of 40 queued appends, 4 runs in 4), bringing back content
 * its user had erased. A command stored at or before the session's latest erasure belongs to the life that erasure
 * closed (or an earlier one): {@link readSessionLifeAt} answers that life for it, so `checkWriteAdmission` refuses it 409
 * `session_erased`. HTTP write requests take their life the same way, at the time they arrived (newcomer ncrace74 F1).
 */
import { findInStream, type EventStore } from '@lib/event-store';
import { erasureStream, SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import { readSessionLife } from './life-at-arrival';

/** The life of a command stored before an erasure whose record names no last revision (an older build wrote it): no life a session is in (lives are revisions, ≥ 0). */
export const ENDED_LIFE = -1n;

/** Entries {@link LatestErasureTimes} keeps before it forgets them all (each: a session erased at least once and commanded since). */
const MAX_REMEMBERED = 10_000;

/**
 * Longest wait (ms) for the record of an erasure that has deleted the session but not written its record yet: an erasure
 * writes it right after the deletion (150–290 ms apart seen under load, newcomer ncrecheck66 F1), so a command received in
 * between is decided once the record says when the erasure was. Past it (an erasure interrupted between the two: a later
 * one writes the record), the command is of the life current now, and that answer is remembered for the life.
 */
export const QUEUED_COMMAND_RECORD_WAIT_MS = 5000;

/** How often the erasure stream is read again while waiting for a record (ms). */
const ERASURE_RECORD_POLL_MS = 25;

/**
 * The time (ms since the epoch) of the erasure that closed each session's previous life, remembered per life: found in the
 * tenant's erasure stream, read backwards to the session's newest record, once per life of a session that was erased.
 */
export class LatestErasureTimes {
  private readonly known = new Map<string, number | null>();
  private readonly pending = new Map<string, Promise<number | null>>();

  /** `sleep`: how the wait for a record sleeps (tests pass their own). */
  constructor(private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms))) {}

  /**
   * The `erasedAt` (ms since the epoch) of the record that closed the life before `life` of session `sessionId`, or null
   * when there is none to compare with: the session was never erased (`life` 0), its newest record holds no time, or no
   * record closing that life came within {@link QUEUED_COMMAND_RECORD_WAIT_MS} (the erasure that deleted it was interrupted before
   * writing it). While the newest record is an earlier life's (an erasure between its deletion and its record), waits for
   * the record, unless `waitForRecord` is false: then null at once, not remembered (an erasure, which finishes such a life
   * itself, need not wait for another to). Remembered per life; one read at a time per life.
   * @throws (rejects with) the store's errors.
   */
  closedBefore(store: EventStore, tenantId: string, sessionId: string, life: bigint, waitForRecord = true): Promise<number | null> {
    if (life <= 0n) return Promise.resolve(null);
    const key = `${tenantId}\u0000${sessionId}\u0000${life}`;
    const known = this.known.get(key);
    if (known !== undefined) return Promise.resolve(known);
    if (!waitForRecord) return this.find(store, tenantId, sessionId, life, 0).then((found) => (found === undefined ? null : this.remember(key, found)));
    let pending = this.pending.get(key);
    if (!pending) {
      pending = this.find(store, tenantId, sessionId, life, QUEUED_COMMAND_RECORD_WAIT_MS).then((found) => this.remember(key, found ?? null));
      const settled = pending.finally(() => this.pending.delete(key));
      settled.catch(() => undefined);
      this.pending.set(key, pending);
    }
    return pending;
  }

  /** Remembers `time` for the life `key`; returns it. */
  private remember(key: string, time: number | null): number | null {
    if (this.known.size >= MAX_REMEMBERED) this.known.clear();
    this.known.set(key, time);
    return time;
  }

  /** The record's time (null: it holds none), or undefined when no record closing that life came within `maxWaitMs`. */
  private async find(store: EventStore, tenantId: string, sessionId: string, life: bigint, maxWaitMs: number): Promise<number | null | undefined> {
    for (let waited = 0; ; waited += ERASURE_RECORD_POLL_MS) {
      const record = await findInStream(
        store,
        erasureStream(tenantId),
        (e) => e.type === SESSION_ERASED && (e.data as SessionErasedData | null)?.sessionId === sessionId,
      );
      const data = record?.data as SessionErasedData | undefined;
      // A record naming the life it closed must close the one just before `life` (else the newest erasure is still writing it).
      if (data !== undefined && (data.lastRevision === undefined || BigInt(data.lastRevision) + 1n === life)) {
        const at = Date.parse(data.erasedAt);
        return Number.isNaN(at) ? null : at;
      }
      if (waited >= maxWaitMs) return undefined;
      await this.sleep(ERASURE_RECORD_POLL_MS);
    }
  }
}

/**
 * The life (stream incarnation, bigint) session `sessionId` of tenant `tenantId` was in at `atMs` (ms since the epoch): when a
 * command was stored in a queue (NATS: the command stream, by the nats-server's clock), or when an HTTP write request
 * arrived (this replica's clock). The life current now ({@link readSessionLife}) unless the erasure that began it happened at
 * or after `atMs` (`erasedAt` of its record, the erasing replica's clock: the clocks are compared, as an erasure's own
 * removal of queued commands does); then the life that erasure's predecessors left at `atMs`: the one opened by the session's
 * newest erasure record dated before `atMs` (the revision after its `lastRevision`), 0n when every record is dated at or
 * after it, or {@link ENDED_LIFE} when that record is of a build that did not name its last revision. A write checked
 * against it (`checkWriteAdmission`) is refused 409 `session_erased` in any later life, and an erasure answers the record of
 * that life: the read of the life may end long after `atMs` (a replica whose store pool is busy, newcomer ncrace74 F1: a
 * `DELETE` sent before another replica's erasure erased the session written again since, acknowledged events included,
 * and an append sent before it was written in the new life), and what happened in between does not move the request to a
 * later life. During an erasure whose record is not written yet, waits for the record (at most
 * {@link QUEUED_COMMAND_RECORD_WAIT_MS}; {@link LatestErasureTimes.closedBefore}), unless `waitForRecord` is false (an
 * erasure: it finishes an erasure interrupted before its record itself, with its own `requestedBy`; waiting let another
 * replica's sweep write it first, without, and held the `DELETE` 5 s): then the life current now.
 * @throws (rejects with) the store's errors.
 */
export async function readSessionLifeAt(
  store: EventStore,
  erasures: LatestErasureTimes,
  tenantId: string,
  sessionId: string,
  atMs: number,
  waitForRecord = true,
): Promise<bigint> {
  const life = await readSessionLife(store, tenantId, sessionId);
  const erasedAt = await erasures.closedBefore(store, tenantId, sessionId, life, waitForRecord);
  if (erasedAt === null || atMs > erasedAt) return life;
  // Erased at or after `atMs` (rare): the life it was in then, from the session's older records.
  const opened = await findInStream(store, erasureStream(tenantId), (e) => {
    const data = e.data as SessionErasedData | null;
    if (e.type !== SESSION_ERASED || data?.sessionId !== sessionId) return false;
    return !(Date.parse(data.erasedAt) >= atMs);
  });
  if (!opened) return 0n;
  const lastRevision = (opened.data as SessionErasedData).lastRevision;
  return lastRevision === undefined ? ENDED_LIFE : BigInt(lastRevision) + 1n;
}
