/**
 * The erasure records this replica's decisions feed has handled, per session, for the command
 * consumer's last check (the gap an erasure of the results stream alone leaves): an answer
 * decided on a life before its erasure but published after every feed deleted that life's answers
 * would stay until the results stream's age limit. The feed notes each record
 * ({@link HandledErasures.noted}) before it deletes the session's copies; the consumer, once an
 * answer is stored in the results stream, deletes it at once when a noted record takes it
 * ({@link HandledErasures.takes}, the rule of `erasesAnswer`). No read of the store: either the
 * record was noted before the check (the check takes the answer), or the feed's deletion started
 * after the answer was stored (the deletion takes it). Every replica that consumes commands runs
 * a feed, which handles every record of the log (also one that another replica's feed handled
 * first), so this replica's feed alone closes the gap for its own answers.
 *
 * In memory, per process: a record is kept {@link HANDLED_ERASURE_KEEP_MS} after it was noted
 * (an answer decided before the record is published within one execution of its command, far
 * less), at most {@link MAX_HANDLED_ERASURES} sessions (the oldest forgotten first).
 */
import type { ErasedRows } from '@lib/session';
import { erasesAnswer, type AnswerBasis } from './answer-basis';

/** How long (ms) a handled erasure record is remembered: 1 hour. */
export const HANDLED_ERASURE_KEEP_MS = 3_600_000;
/** How many erased sessions are remembered at most. */
export const MAX_HANDLED_ERASURES = 100_000;

/** The records noted for one session, merged: each rule takes more as its bound grows. */
interface Noted {
  /** The highest `lastRevision` of the records that name one, or null. */
  lastRevision: bigint | null;
  /** The highest position of the records without `lastRevision`, or null. */
  position: bigint | null;
  /** When the last record was noted (ms since the epoch). */
  at: number;
}

/** See the module doc. */
export class HandledErasures {
  private readonly bySession = new Map<string, Noted>();

  constructor(
    private readonly keepMs = HANDLED_ERASURE_KEEP_MS,
    private readonly max = MAX_HANDLED_ERASURES,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes that the erasure record at global position `erasure.position` naming `erasure.rows` (its `erasedRowsOf`) of session `sessionId` of `tenantId` is being handled. */
  noted(tenantId: string, sessionId: string, erasure: { position: bigint; rows: ErasedRows }): void {
    const key = sessionOf(tenantId, sessionId);
    const before = this.bySession.get(key);
    const byRevision = erasure.rows.kind === 'upToRevision' ? erasure.rows.lastRevision : null;
    const byPosition = erasure.rows.kind === 'upToRevision' ? null : erasure.position;
    const noted: Noted = {
      lastRevision: maxOf(before?.lastRevision ?? null, byRevision),
      position: maxOf(before?.position ?? null, byPosition),
      at: this.now(),
    };
    // Re-inserted: the map's order is the order noted, the oldest first.
    this.bySession.delete(key);
    this.bySession.set(key, noted);
    this.forgetOld();
  }

  /** Whether a record noted for session `sessionId` of `tenantId` takes an answer decided on `basis` (without one: any record does). */
  takes(tenantId: string, sessionId: string, basis: AnswerBasis | undefined): boolean {
    const noted = this.bySession.get(sessionOf(tenantId, sessionId));
    if (!noted || this.now() - noted.at > this.keepMs) return false;
    if (!basis) return true;
    const byRevision = noted.lastRevision !== null && erasesAnswer({ position: 0n, rows: { kind: 'upToRevision', lastRevision: noted.lastRevision } }, basis);
    return byRevision || (noted.position !== null && erasesAnswer({ position: noted.position, rows: { kind: 'all' } }, basis));
  }

  private forgetOld(): void {
    const now = this.now();
    for (const [key, noted] of this.bySession) {
      if (this.bySession.size <= this.max && now - noted.at <= this.keepMs) return;
      this.bySession.delete(key);
    }
  }
}

function sessionOf(tenantId: string, sessionId: string): string {
  return `${tenantId}\u0000${sessionId}`;
}

function maxOf(a: bigint | null, b: bigint | null): bigint | null {
  if (a === null) return b;
  if (b === null) return a;
  return a > b ? a : b;
}
