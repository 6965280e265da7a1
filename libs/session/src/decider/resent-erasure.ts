/**
 * The rule that recognises a `DELETE` sent again by its client (its answer lost) by the client's
 * own request id, whatever life the session is in now: before, a resend arriving after the id was
 * written again erased that new life (a DELETE carries no expected revision). Pure: the handler
 * loads the session's erasure records and the life it arrived in, and passes them in.
 *
 * A DELETE is a resend of an earlier erasure when all hold:
 * 1. it carries a request id its client chose (`requestedBy.requestIdFrom` `client`: the request's
 *    own usable `X-Request-Id`), not one the service made (`service`), nor a NATS command id;
 * 2. an erasure record of the same session (records are per tenant: `erasure-<tenantId>`) carries
 *    that same client-chosen request id;
 * 3. under the same API key label (both absent in open mode): a request id is any text a client
 *    sends, so another key's request reusing it (another client of the tenant) is not a resend.
 * The newest such record answers (200, its `erasedEvents`, `erasedAt` and position) and nothing is
 * erased. Anything else is erased as before.
 */
import type { RequestedBy } from '../events/requested-by';
import type { SessionErasedData } from '../events/erasure-events';

/** An erasure record as stored: its global position (bigint) and its data. */
export interface StoredErasure {
  position: bigint;
  data: SessionErasedData;
}

/** What an erasure does about its records ({@link decideResentErasure}). */
export type ResentErasureDecision =
  /** A resend of the erasure that wrote `record`: answer it, erase nothing. */
  | { kind: 'resent'; record: StoredErasure }
  /**
   * No record matches yet, but the life before the one the DELETE arrived in (ending at revision
   * `lastRevision`, bigint) has no record: an erasure of it (maybe this DELETE's first sending, on
   * another replica) deleted it and has not written its record yet. Wait for that record and decide
   * again; when none comes, erase.
   */
  | { kind: 'awaitRecordOfLife'; lastRevision: bigint }
  /** Not a resend: erase as any DELETE does. */
  | { kind: 'erase' };

/** The request id a client chose for a command (`requestIdFrom` `client`), or undefined (none, or one the service made). Pure. */
export function clientRequestIdOf(requestedBy: RequestedBy | undefined): string | undefined {
  return requestedBy?.requestIdFrom === 'client' && typeof requestedBy.requestId === 'string' ? requestedBy.requestId : undefined;
}

/**
 * Decides whether an erasure of session `command.sessionId` ordered by `command.requestedBy` is a
 * resend of an earlier one (see the module doc). `records`: erasure records of the command's tenant,
 * in any order (those of other sessions are ignored); `arrivedIn`: the session's incarnation when the
 * erasure arrived (bigint: the revision its life starts at, 0n when never deleted). Without a
 * client-chosen request id it always answers `erase` (so the handler need load nothing). With one
 * and no matching record, it answers `awaitRecordOfLife` when the session was deleted before
 * (`arrivedIn` > 0n) and none of its records closes the life ending at `arrivedIn` - 1n or a later
 * one (a record written before records named their life counts as closing it). Pure.
 */
export function decideResentErasure(
  command: { sessionId: string; requestedBy?: RequestedBy },
  records: readonly StoredErasure[],
  arrivedIn: bigint,
): ResentErasureDecision {
  const requestId = clientRequestIdOf(command.requestedBy);
  if (requestId === undefined) return { kind: 'erase' };
  const keyLabel = command.requestedBy?.keyLabel;
  const ofSession = records.filter((r) => r.data.sessionId === command.sessionId);
  let resent: StoredErasure | undefined;
  for (const record of ofSession) {
    const by = record.data.requestedBy;
    if (clientRequestIdOf(by) !== requestId || by?.keyLabel !== keyLabel) continue;
    if (!resent || record.position > resent.position) resent = record;
  }
  if (resent) return { kind: 'resent', record: resent };
  if (arrivedIn === 0n) return { kind: 'erase' };
  const lastRevision = arrivedIn - 1n;
  const closed = ofSession.some((r) => r.data.lastRevision === undefined || BigInt(r.data.lastRevision) >= lastRevision);
  return closed ? { kind: 'erase' } : { kind: 'awaitRecordOfLife', lastRevision };
}
