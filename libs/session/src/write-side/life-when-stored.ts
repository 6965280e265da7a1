/**
 * The session life a queued command belongs to (newcomer ncnats66 F1, high): a NATS command is stored in the command
 * stream when it is published, and may wait there behind the session's earlier commands. The life read when a replica
 * receives it ({@link readSessionLife}) is the life current then: a backlog published before an HTTP erasure and received
 * after it landed was applied to the session's next life (20 of 40 queued appends, 4 runs in 4), bringing back content
 * its user had erased. A command stored at or before the session's latest erasure belongs to the life that erasure
 * closed: {@link readSessionLifeWhenStored} answers {@link ENDED_LIFE} for it, so `checkWriteAdmission` refuses it 409
 * `session_erased`, as an HTTP request that arrived before an erasure is.
 */
import { findInStream, type EventStore } from '@lib/event-store';
import { erasureStream, SESSION_ERASED, type SessionErasedData } from '../events/erasure-events';
import { readSessionLife } from './life-at-arrival';

/** The life a command belongs to when it was stored before the session's latest erasure: no life a session is in (lives are revisions, ≥ 0). */
export const ENDED_LIFE = -1n;

/** Entries {@link LatestErasureTimes} keeps before it forgets them all (each: a session erased at least once and commanded since). */
const MAX_REMEMBERED = 10_000;

/**
 * The time (ms since the epoch) of the erasure that closed each session's previous life, remembered per life: found in the
 * tenant's erasure stream, read backwards to the session's newest record, once per life of a session that was erased.
 */
export class LatestErasureTimes {
  private readonly known = new Map<string, number | null>();

  /**
   * The `erasedAt` (ms since the epoch) of the record that closed the life before `life` of session `sessionId`, or null
   * when there is none to compare with: the session was never erased (`life` 0), or its newest record is not the one
   * closing that life (an erasure whose record is not written yet), or it holds no time. Remembered only when found.
   * @throws (rejects with) the store's errors.
   */
  async closedBefore(store: EventStore, tenantId: string, sessionId: string, life: bigint): Promise<number | null> {
    if (life <= 0n) return null;
    const key = `${tenantId}\u0000${sessionId}\u0000${life}`;
    const known = this.known.get(key);
    if (known !== undefined) return known;
    const record = await findInStream(
      store,
      erasureStream(tenantId),
      (e) => e.type === SESSION_ERASED && (e.data as SessionErasedData | null)?.sessionId === sessionId,
    );
    const data = record?.data as SessionErasedData | undefined;
    // A record naming the life it closed must close the one just before `life` (else the newest erasure is still writing it).
    if (data === undefined || (data.lastRevision !== undefined && BigInt(data.lastRevision) + 1n !== life)) return null;
    const at = Date.parse(data.erasedAt);
    const time = Number.isNaN(at) ? null : at;
    if (this.known.size >= MAX_REMEMBERED) this.known.clear();
    this.known.set(key, time);
    return time;
  }
}

/**
 * The life of session `sessionId` of tenant `tenantId` that a command stored at `storedAtMs` (ms since the epoch, by the
 * clock of the queue that stored it: for NATS, the nats-server's) belongs to: {@link ENDED_LIFE} when the session's latest
 * erasure happened at or after that time (`erasedAt` of its record, the erasing replica's clock: the two clocks are
 * compared, as the erasure's own removal of queued commands does), else the life it is in now ({@link readSessionLife}).
 * During an erasure whose record is not written yet the command is taken as of the life current now (as before).
 * @throws (rejects with) the store's errors.
 */
export async function readSessionLifeWhenStored(
  store: EventStore,
  erasures: LatestErasureTimes,
  tenantId: string,
  sessionId: string,
  storedAtMs: number,
): Promise<bigint> {
  const life = await readSessionLife(store, tenantId, sessionId);
  const erasedAt = await erasures.closedBefore(store, tenantId, sessionId, life);
  return erasedAt !== null && storedAtMs <= erasedAt ? ENDED_LIFE : life;
}
