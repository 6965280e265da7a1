/**
 * The rule of when a write request may still write (newcomer findings F1, F2: a request whose client
 * had given up, retried elsewhere and erased the session was applied, or erased again, long after it
 * arrived, in the session's next life). Every write handler (append, policy, erasure) calls
 * {@link checkWriteAdmission} right before its write at the revision it loaded, on each attempt;
 * every transport (HTTP, NATS) says when a request arrived and whether its client is gone with one
 * {@link WriteAdmission} ({@link admitWrite}). Pure: the clock and the store's answers are passed in.
 *
 * A write may start only when all hold:
 * 1. its client is not gone (HTTP: the connection closed; the log then stays as it was, no answer);
 * 2. it has waited at most `deadlineMs` since it arrived, on this replica's monotonic clock (no
 *    other clock is compared): past it, 503 `request_expired`, nothing written, never later;
 * 3. the session is in the life it was in when the request arrived (its incarnation, read by the
 *    transport when the request arrived, {@link WriteAdmission.lifeAtArrival}: HTTP when its head
 *    was routed, before its body and before any request ahead of it on its connection was
 *    answered; NATS when this replica received it, before it queued behind its session's earlier
 *    commands; without a transport's read, by the handler first thing): a life that began after the
 *    request arrived (the session was erased, and maybe written again) never gets it: 409
 *    `session_erased` (an erasure answers as the erasure of its own life did instead). The write
 *    itself carries that incarnation, so the store refuses it atomically when an erasure lands
 *    between this check and the write.
 */
import { RequestExpiredError, SessionErasedMeanwhileError } from '../errors';

/** How a write request arrived, as its transport saw it. */
export interface WriteAdmission {
  /** When the request arrived at this replica: `performance.now()` ms (monotonic, this process only). */
  readonly arrivedAtMs: number;
  /** Longest wait (ms) from arrival to the start of its write (`WRITE_DEADLINE_MS`). */
  readonly deadlineMs: number;
  /** Whether the request's client is gone (HTTP: its connection closed); a transport without the notion answers false. */
  readonly clientGone: () => boolean;
  /**
   * The session's life (its stream's incarnation, `EventStore.streamIncarnation`) as the transport
   * read it when the request arrived; absent when the transport did not read it (its handler then
   * reads it first thing). A rejection is the store's error, raised by the handler that awaits it.
   */
  readonly lifeAtArrival?: Promise<bigint>;
  /**
   * What `arrivedAtMs` is, as a `request_expired` message names it after "counted from", with what
   * the wait includes (HTTP: `when this replica received the request's head (the time its body took
   * to arrive counts, …)`); absent: `when this replica received the request` (errors.ts).
   */
  readonly deadlineCountedFrom?: string;
}

/** The session's life (stream incarnation, bigint) when the request arrived and now, as the handler read them. */
export interface LivesSeen {
  atArrival: bigint;
  now: bigint;
}

const admissions = new WeakMap<object, WriteAdmission>();

/** Records how `command` (the object given to the command bus) arrived; returns `command`. */
export function admitWrite<C extends object>(command: C, admission: WriteAdmission): C {
  admissions.set(command, admission);
  return command;
}

/** How `command` arrived, when its transport said so (tests and the service's own commands: undefined, no deadline). */
export function admissionOf(command: object): WriteAdmission | undefined {
  return admissions.get(command);
}

/**
 * The rule (see the module doc): returns when `command` may write now, in the life `lives.now`.
 * `nowMs`: `performance.now()`. `sessionId` names the session in the refusal.
 * @throws RequestExpiredError (503 `request_expired`) when its client is gone or its deadline passed.
 * @throws SessionErasedMeanwhileError (409 `session_erased`) when the session's life is not the one it arrived in.
 */
export function checkWriteAdmission(command: object, sessionId: string, lives: LivesSeen, nowMs: number): void {
  const admission = admissions.get(command);
  if (admission) {
    const waitedMs = nowMs - admission.arrivedAtMs;
    const gone = admission.clientGone();
    if (gone || waitedMs > admission.deadlineMs) throw new RequestExpiredError(waitedMs, admission.deadlineMs, gone, admission.deadlineCountedFrom);
  }
  if (lives.now !== lives.atArrival) throw new SessionErasedMeanwhileError(sessionId);
}
