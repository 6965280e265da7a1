/**
 * The basis of a command's answer on the results stream: where in the session's stream the command
 * was decided, recorded in the answer's headers so that an erasure record deletes exactly the
 * answers of the life it closes (and of the lives before it), and keeps those of the session
 * written again after it, also when the decisions feed reaches the record late (feed lag, a replica
 * catching up, a feed restarted). The rule is the read models' ({@link erasesCopyOf}): an answer is
 * a copy made of the session up to its basis.
 *
 * The basis comes from what the command's handler did, without a read of its own
 * ({@link basisOfAnswer}, {@link basisDecidedOn}): the last event the command wrote (an append,
 * a policy set, a compaction decision) or the event its answer stands on (the policy in force, the
 * state a compaction found nothing to do on), else the last event of the state the handler loaded
 * and decided on (a refusal, a replayed compaction). Either is an event of the life the command was
 * decided in (a write is refused by the store once that life is erased), at most the last event of
 * that life: the erasure of that life always takes the answer (an answer of an erased life always
 * goes: erasure is a GDPR promise), and the erasure of an earlier life never does (its record's
 * `lastRevision` is below the incarnation of the life the command saw). Only when the command
 * loaded no state with an event (refused on the message alone, or decided on a session without
 * events) is the basis read ({@link readAnswerBasis}) once it is answered: such an answer holds
 * nothing of any life of the session.
 */
import type { MsgHdrs } from '@nats-io/transport-node';
import type { EventStore } from '@lib/event-store';
import { checkpointEventIdentity, checkpointOffLog, erasesCopyOf, type DecidedOn, type ErasedRows } from '@lib/session';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER } from './nats-names';

/** Header of an answer carrying the stream revision of its {@link AnswerBasis} (decimal string). */
export const SESSION_REVISION_HEADER = 'Session-Revision';

/**
 * What an answer was decided on (bigints):
 * - derived from the command ({@link basisOfAnswer}, {@link basisDecidedOn}): the revision and
 *   global position of the event, and its identity without the event id and time
 *   (`<stream>@<revision>`, see {@link answerOfAnotherLog});
 * - read ({@link readAnswerBasis}), the session has events: the revision, global position and
 *   identity (`checkpointEventIdentity`: `<stream>@<revision> <event id> <recorded at>`) of its last event;
 * - it has none (never written, or erased and not written again): `revision` is its incarnation
 *   (`EventStore.streamIncarnation`: the revision its next event gets), `position` the log's head
 *   (`EventStore.headPosition`), `event` null.
 *
 * Published as headers `Session-Revision`, `Log-Position` and, when not null, `Log-Event`.
 */
export interface AnswerBasis {
  revision: bigint;
  position: bigint;
  event: string | null;
}

/**
 * Reads the {@link AnswerBasis} of a command of session stream `stream` (`sessionStream(key)`):
 * one read of the stream's last event; two more (incarnation and head, at once) when it has none.
 * @throws what the store throws (e.g. EventStoreUnavailableError).
 */
export async function readAnswerBasis(store: EventStore, stream: string): Promise<AnswerBasis> {
  const [last] = await store.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
  if (last) return { revision: last.revision, position: last.position, event: checkpointEventIdentity(last) };
  const [revision, position] = await Promise.all([store.streamIncarnation(stream), store.headPosition()]);
  return { revision, position, event: null };
}

/**
 * The basis of event `revision` at global position `position` (bigints) of session stream `stream`
 * (`sessionStream(key)`), derived without a read: identity `<stream>@<revision>`.
 */
export function derivedBasis(stream: string, revision: bigint, position: bigint): AnswerBasis {
  return { revision, position, event: `${stream}@${revision}` };
}

/**
 * The basis a successful command's answer `body` names, when it names one event of the session
 * (session stream `stream`): an append's last event written (or, answering a resend, written
 * first), the policy event in force after a policy command, a compaction's decision written or the
 * state it was decided on (`revision` and `position` of its answer; not for a `replayed` decision,
 * whose position is the decision's and revision the state's). Null otherwise (no position named):
 * the caller takes the state the handler decided on.
 */
export function basisOfAnswer(stream: string, kind: string, body: unknown): AnswerBasis | null {
  const { revision, position, replayed } = (body ?? {}) as { revision?: unknown; position?: unknown; replayed?: unknown };
  if (kind === 'compact' && replayed === true) return null;
  if (typeof revision !== 'string' || typeof position !== 'string' || !/^\d+$/.test(revision) || !/^\d+$/.test(position)) return null;
  return derivedBasis(stream, BigInt(revision), BigInt(position));
}

/** The basis of a command decided on `decidedOn` (see `DecidedOn`; null: a state without an event, so none). */
export function basisDecidedOn(stream: string, decidedOn: DecidedOn | undefined): AnswerBasis | null {
  return decidedOn ? derivedBasis(stream, decidedOn.revision, decidedOn.position) : null;
}

/** Sets the headers of `basis` on `h` (see {@link AnswerBasis}). */
export function setAnswerBasisHeaders(h: MsgHdrs, basis: AnswerBasis): void {
  h.set(SESSION_REVISION_HEADER, basis.revision.toString());
  h.set(LOG_POSITION_HEADER, basis.position.toString());
  if (basis.event !== null) h.set(LOG_EVENT_HEADER, basis.event);
}

/**
 * The {@link AnswerBasis} an answer's headers `h` carry, or null when they carry none (an answer
 * published by a release before it was recorded, or whose basis could not be read): such an
 * answer is taken by every erasure of its session.
 */
export function answerBasisOf(h: MsgHdrs | undefined): AnswerBasis | null {
  const revision = h?.get(SESSION_REVISION_HEADER);
  const position = h?.get(LOG_POSITION_HEADER);
  if (!h || !revision || !position || !/^\d+$/.test(revision) || !/^\d+$/.test(position)) return null;
  return { revision: BigInt(revision), position: BigInt(position), event: h.get(LOG_EVENT_HEADER) || null };
}

/**
 * Whether the erasure record at global position `erasure.position` naming the rows `erasure.rows`
 * (its `erasedRowsOf`) takes an answer decided on `basis`, by {@link erasesCopyOf}: with
 * `lastRevision` (`upToRevision`), the answers whose basis revision is at most it (decided on the
 * erased life or an earlier one); for a record without it (`beforePosition`, `all`: written by
 * builds before it), those whose basis position is before the record: every answer decided
 * before the life was deleted, and those decided between the deletion and the record (when in
 * doubt, delete). Not the record's `lastPosition`, which may be below the life's last event (an
 * older build finishing an interrupted erasure wrote the last position its read models held): an
 * answer decided on the rest of the life would stay. Pure.
 */
export function erasesAnswer(erasure: { position: bigint; rows: ErasedRows }, basis: AnswerBasis): boolean {
  const rows: ErasedRows = erasure.rows.kind === 'upToRevision' ? erasure.rows : { kind: 'beforePosition', before: erasure.position };
  return erasesCopyOf(rows, basis);
}

/**
 * Whether an answer decided on `basis` is of another log than `store`'s (published before a restore
 * of the store from a backup, or by another store on the same prefix), with the store's head
 * `head` (bigint): by the rule of the decisions feed's messages (`checkpointOffLog`: its position
 * past the head, or another event there; a derived basis, identity `<stream>@<revision>`, matches
 * the event of that stream and revision whatever its id and time), and, stricter than that rule
 * (when in doubt, delete), when its basis event is no longer in the store: an answer of this log
 * whose session was written again after an erasure has its basis event in the store until the
 * session is erased again (and that erasure takes it). A basis without an event (decided on a
 * session without events) is of another log only past the head.
 * @throws what the store throws (e.g. EventStoreUnavailableError).
 */
export async function answerOfAnotherLog(store: EventStore, basis: AnswerBasis, head: bigint): Promise<boolean> {
  if (basis.event !== null && isDerivedIdentity(basis.event)) {
    if (basis.position > head) return true;
    const found = await store.eventAt(basis.position);
    return found === null || !checkpointEventIdentity(found).startsWith(`${basis.event} `);
  }
  const recorded = { position: basis.position, event: basis.event };
  if ((await checkpointOffLog(store, recorded, head)) !== null) return true;
  return basis.event !== null && (await store.eventAt(basis.position)) === null;
}

/** Whether `identity` is a derived one (`<stream>@<revision>`), not `checkpointEventIdentity`'s (which goes on with ` <event id> <recorded at>`). */
function isDerivedIdentity(identity: string): boolean {
  return /@\d+$/.test(identity);
}
