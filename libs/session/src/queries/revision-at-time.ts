/**
 * Time travel by time (`atTime`): which revision of a session's log was the last one recorded at
 * or before an instant. The one rule every layer answers `atTime` with (the window route, and the
 * audit page through it).
 */
import { findInStream, type EventStore } from '@lib/event-store';
import { sessionStream } from '../events/session-stream-events';
import { SESSION_ERASED, erasureStream, type SessionErasedData } from '../events/erasure-events';
import { isoTimeMillis } from '../domain/utc-time-text';

/** The event an `atTime` resolved to: its stream revision and when the store recorded it. */
export interface RevisionAtTime {
  /** The revision (bigint) of the last event whose `recordedAt` is at or before the time asked. */
  revision: bigint;
  /** That event's `recordedAt` (the store's `created`, to the millisecond). */
  recordedAt: Date;
}

/**
 * Whether an event recorded at `recordedAt` (ms precision) was recorded at or before `at`, an
 * ISO-8601 date-time with `Z` or an offset (as the API's date-time rule accepts it). Digits of
 * `at` past the millisecond cannot make a recorded time (whole milliseconds) later than it, so
 * `at` is compared cut to the millisecond ({@link isoTimeMillis}): `…00.9915Z` includes an event
 * recorded at `…00.991Z`, and `…00.0009999999999Z` one recorded at `…00.000Z` only.
 * @throws RangeError when `at` is not a date-time `Date` reads (callers validate it first).
 */
export function recordedAtOrBefore(recordedAt: Date, at: string): boolean {
  const limit = isoTimeMillis(at);
  if (Number.isNaN(limit)) throw new RangeError(`not a date-time: ${at}`);
  return recordedAt.getTime() <= limit;
}

/**
 * The last event of session `key` (a `sessionKey`) in revision order whose `recordedAt` is at or
 * before `at` (see {@link recordedAtOrBefore}), or null when there is none: the session has no
 * event (never written, or erased), or its first event was recorded after `at`. "Last in revision
 * order" holds also when the store's clock stepped back (docs/reliability.md, Clock jumps): the answer is the
 * highest revision recorded at or before `at`. Reads the log backwards from its end (one read of
 * a page when `at` is at or after the last event); a time before the session reads it all.
 * May reject with the store's errors.
 */
export async function revisionAtTime(store: EventStore, key: string, at: string): Promise<RevisionAtTime | null> {
  const found = await findInStream(store, sessionStream(key), (e) => recordedAtOrBefore(e.created, at));
  return found ? { revision: found.revision, recordedAt: found.created } : null;
}

/** An erasure of an earlier life of a session, as {@link earlierLifeErasure} finds it. */
export interface EarlierLifeErasure {
  /** When that life was erased (the record's `erasedAt`, ISO-8601 UTC). */
  erasedAt: string;
  /** The last revision the erasure deleted (bigint), when the record names it (records since `lastRevision` was added). */
  lastRevision?: bigint;
  /**
   * The first revision of that life (bigint): 0 for the session id's first life, else the revision after the
   * erasure before it; absent when the record or the one before it does not name its last revision.
   */
  firstRevision?: bigint;
}

/**
 * What {@link earlierLifeErasure} looks for: the life that held revision `revision` (bigint), or the life that
 * existed at `at` (an ISO-8601 time as the client sent it: the first life erased after it). Absent: the newest
 * earlier life.
 */
export type ErasedLifeOf = { revision: bigint } | { at: string };

/**
 * The erasure of the earlier life of session `sessionId` of tenant `tenantId` that held `of` (see
 * {@link ErasedLifeOf}; absent: the newest), before its current life, whose first event is `first` (its revision and
 * global position), or null when the tenant's erasure stream holds none (the session id was never erased before). A
 * record naming `lastRevision` is of an earlier life when that revision is below `first.revision` (revisions of a
 * session id are never reused); an older record without it, when it was written before `first`. Of a session id
 * erased several times, the life holding a revision is the oldest whose `lastRevision` is at or past it, and the
 * life existing at a time the oldest erased after it (newcomer ncaudit72 F1: the newest was named, with a range
 * that merged the lives); a record without `lastRevision` ends the search for a revision. Reads the erasure stream
 * backwards from its end until the record before that life's (the whole stream when there is none).
 * May reject with the store's errors.
 */
export async function earlierLifeErasure(
  store: EventStore,
  tenantId: string,
  sessionId: string,
  first: { revision: bigint; position: bigint },
  of?: ErasedLifeOf,
): Promise<EarlierLifeErasure | null> {
  let found: SessionErasedData | undefined;
  // A record is taken while it still holds `of`, read newest first; the first older one that does not ends the read.
  const holds = (data: SessionErasedData): boolean => {
    if (of === undefined) return false;
    if ('revision' in of) return data.lastRevision !== undefined && BigInt(data.lastRevision) >= of.revision;
    return Date.parse(data.erasedAt) > isoTimeMillis(of.at);
  };
  const before = await findInStream(store, erasureStream(tenantId), (e) => {
    const data = e.data as SessionErasedData;
    if (e.type !== SESSION_ERASED || data.sessionId !== sessionId) return false;
    if (!(data.lastRevision !== undefined ? BigInt(data.lastRevision) < first.revision : e.position < first.position)) return false;
    if (found === undefined || holds(data)) {
      found = data;
      return false;
    }
    return true;
  });
  if (!found) return null;
  const lastOfBefore = (before?.data as SessionErasedData | undefined)?.lastRevision;
  const firstRevision = before === null ? 0n : lastOfBefore !== undefined ? BigInt(lastOfBefore) + 1n : undefined;
  return {
    erasedAt: found.erasedAt,
    ...(found.lastRevision !== undefined ? { lastRevision: BigInt(found.lastRevision) } : {}),
    ...(found.lastRevision !== undefined && firstRevision !== undefined ? { firstRevision } : {}),
  };
}

/** How a message names the revisions of an erased life: ` (revisions 0–26)`, ` (revisions up to 26)`, or nothing when the record does not say. */
function erasedRange(erased: EarlierLifeErasure): string {
  if (erased.lastRevision === undefined) return '';
  return erased.firstRevision !== undefined ? ` (revisions ${erased.firstRevision}–${erased.lastRevision})` : ` (revisions up to ${erased.lastRevision})`;
}

/**
 * The message of 400 `time_out_of_range` for `atTime` (as sent) before the first event of a
 * session's current life (`first`: its revision and recorded time). `atTime` is shown as
 * `shownAtTime` (cut and quoted by the caller), and also in UTC when it has an offset. Without
 * `erased` no window existed yet; with it (see {@link earlierLifeErasure}) an earlier life of
 * the session id existed and was erased, so its windows cannot be shown. Pure.
 */
export function timeOutOfRangeMessage(
  atTime: string,
  shownAtTime: string,
  first: { revision: bigint; recordedAt: Date },
  erased: EarlierLifeErasure | null,
): string {
  // A time with an offset is also given in UTC, as the recorded time is (cut to the millisecond).
  const inUtc = /z$/i.test(atTime) ? '' : ` (${new Date(isoTimeMillis(atTime)).toISOString()} UTC)`;
  const asked = `${shownAtTime}${inUtc}`;
  const at = first.recordedAt.toISOString();
  if (!erased)
    return `atTime: the session's first event (revision ${first.revision}) was recorded at ${at}, after ${asked}: no window existed yet; ask for a time at or after it`;
  return `atTime: the session's current life began with revision ${first.revision}, recorded at ${at}, after ${asked}; an earlier life of this session id${erasedRange(erased)} was erased at ${erased.erasedAt}, and an erased life's windows are not kept: ask for a time at or after ${at}`;
}

/**
 * The message of 400 `revision_out_of_range` for `atRevision` outside a session's revisions
 * (`first` to `last`, of its current life). With `erased` (see {@link earlierLifeErasure}) and
 * `atRevision` before `first`, it says that an earlier life of the session id held those revisions
 * and was erased, and when, as {@link timeOutOfRangeMessage} does for `atTime`, and ends naming the
 * current life's range again (`ask for a revision from 40 to 41`: "that range" followed the erased
 * one, newcomer ncui74 F4). Pure.
 */
export function revisionOutOfRangeMessage(atRevision: bigint, first: bigint, last: bigint, erased: EarlierLifeErasure | null): string {
  const range = `atRevision: the session's revisions run from ${first} to ${last}`;
  if (!erased || atRevision >= first) return `${range}; ask for a revision in that range`;
  return `${range}: its current life began with revision ${first}; an earlier life of this session id${erasedRange(erased)} was erased at ${erased.erasedAt}, and an erased life's windows are not kept: ask for a revision from ${first} to ${last}`;
}
