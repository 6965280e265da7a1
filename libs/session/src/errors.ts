/**
 * Errors of the session domain. Each carries a stable `code` and a message that says what to fix.
 * Transports decide what a code means to their callers (the HTTP app maps each code to a status
 * in one table); nothing here knows about HTTP. A message repeats a client's value through
 * {@link quoteInput} (at most 64 characters of it).
 */
import { quoteInput } from '@lib/compaction';
import { COMPACTION_ID_FORM, COMPACTION_ID_PATTERN } from './domain/compaction-id-case';
import type { SummarizerIdentity } from './events/session-stream-events';

/** Every code a {@link SessionError} can carry (stable, documented in docs/http-api.md). */
export type SessionErrorCode =
  | 'session_not_found'
  | 'compaction_not_found'
  | 'wrong_expected_revision'
  | 'duplicate_event_id'
  | 'erasure_interrupted'
  | 'unknown_tool_call'
  | 'tool_call_conflict'
  | 'user_id_conflict'
  | 'projection_behind'
  | 'read_models_off_log'
  | 'counting_timeout'
  | 'counting_too_costly'
  | 'request_expired'
  | 'session_erased'
  | InvalidRequestCode;

/** Codes of {@link InvalidRequestError}: the request is understood but a value is not allowed. */
export type InvalidRequestCode =
  | 'invalid_request'
  | 'invalid_message'
  | 'invalid_parameter'
  | 'invalid_session_id'
  | 'revision_out_of_range'
  | 'time_out_of_range'
  | 'position_out_of_range'
  | 'validation_failed'
  | 'invalid_query'
  | 'cursor_expired';

/**
 * The fields an error adds to `{ code, message }` for its client (all optional; revisions and
 * positions are decimal strings, `deadlineMs` in milliseconds). The HTTP API declares exactly
 * these in its `Error` schema.
 */
export interface SessionErrorDetails {
  /** The offending field, query parameter or header (a request JSON path such as `events[2].text`, or a header's name such as `X-Request-Id`). */
  parameter?: string;
  /** `wrong_expected_revision`: what the request sent (`no_stream`, `stream_exists`, `any` or a revision). */
  expected?: string;
  /** `wrong_expected_revision`: the session's last revision, or `no_stream` when it has no events. */
  actual?: string;
  /** `user_id_conflict`: the session's owner. */
  userId?: string;
  /** `duplicate_event_id`: the event id already used. */
  eventId?: string;
  /** `unknown_tool_call`: the call id no call of the session has. */
  toolCallId?: string;
  /**
   * `counting_timeout`: the deadline that passed, in ms; only with `refusal` `deadline_passed`. `counting_too_costly`: the deadline the work alone ran past.
   * `request_expired`: the write deadline (`WRITE_DEADLINE_MS`) the request's write did not start within.
   */
  deadlineMs?: number;
  /**
   * `counting_timeout` (always present): why the work was refused: `deadline_passed` (it waited
   * or ran past `deadlineMs`), or `queue_full` (refused at once, before it started: too many
   * large texts were already waiting; no deadline passed).
   */
  refusal?: 'deadline_passed' | 'queue_full';
  /**
   * `session_not_found` of `GET /v1/sessions/{sessionId}` for a session id that was erased: when its
   * latest erasure was (ISO-8601 UTC, the erasure record's `erasedAt`). Absent for an id never written.
   */
  erasedAt?: string;
  /**
   * A compaction refused after its pass called the summarizer: `session_not_found` (its session
   * erased, or gone, meanwhile) or `invalid_parameter` naming `strategy` (by policy, the policy
   * cleared meanwhile): those calls, whose replies went into no decision (the answer's
   * `discardedSummarizerCalls` of a pass that answers). Absent when the pass called none.
   */
  discardedSummarizerCalls?: SummarizerIdentity;
  /** `projection_behind`: the position waited for. */
  minPosition?: string;
  /** `projection_behind`: the position the read models are at. */
  checkpoint?: string;
  /** `projection_behind` at start-up: the log's head the read models catch up with. */
  catchingUpTo?: string;
  /**
   * `store_unavailable` (always present): true when the write was sent to the store and its outcome
   * is unknown (send the same request again unchanged); false when nothing was written (retry).
   */
  mayHaveBeenWritten?: boolean;
}

/**
 * Where an error lies in a command's list of events: the event's index in the command (0-based)
 * and a field path under it in the native event shape (`id`, `toolCalls[1].id`,
 * `responses[0].toolCallId`). A transport names it in its own request's terms (see
 * {@link SessionError.restatedAt}).
 */
export interface EventLocation {
  index: number;
  field: string;
}

/** Base class: `code` is stable and documented. */
export abstract class SessionError extends Error {
  abstract readonly code: SessionErrorCode;
  /** Extra fields returned to the client (e.g. expected and actual revisions). */
  readonly details?: SessionErrorDetails;
  /** For an error about one event of a command, until a transport restates it: where it lies. */
  readonly location?: EventLocation;
  /** With `location`: the message without the location. */
  readonly reason?: string;

  /**
   * `where` names what the error is about: nothing (`message` says it all), a request parameter
   * (the message becomes `<parameter>: <message>` and `details.parameter` is set), or an
   * {@link EventLocation} of the command (left for the transport to name, see {@link restatedAt}).
   */
  constructor(message: string, details?: SessionErrorDetails, where?: string | EventLocation) {
    super(where === undefined ? message : typeof where === 'string' ? `${where}: ${message}` : `event ${where.index}, ${where.field}: ${message}`);
    this.details = typeof where === 'string' ? { parameter: where, ...details } : details;
    if (typeof where === 'object') {
      this.location = where;
      this.reason = message;
    }
  }

  /**
   * This error as a transport states it, naming its {@link location} as `parameter` (e.g. the
   * request JSON path `messages[2].tool_calls[1].id`): message `<parameter>: <reason>` and
   * `details.parameter`. An error without a location is returned as it is.
   */
  restatedAt(parameter: string): this {
    if (!this.location || this.reason === undefined) return this;
    const restated = Object.create(Object.getPrototypeOf(this) as object) as this;
    Object.assign(restated, this, { message: `${parameter}: ${this.reason}`, details: { parameter, ...this.details }, location: undefined, reason: undefined });
    restated.stack = this.stack;
    return restated;
  }
}

/**
 * How far behind the log the read models that found no session are: `checkpoint`, the global
 * position they have applied the log up to; `head`, the log's last position (null when the event
 * store did not answer). Only when they are behind (`checkpoint` < `head`, or the head unknown).
 */
export interface ReadModelsBehind {
  checkpoint: bigint;
  head: bigint | null;
}

/**
 * No event was ever appended to this session (or it was erased). With `erasedAt` (ISO-8601 UTC,
 * the session's latest erasure record's), the message says it was erased then, and
 * `details.erasedAt` carries it. With `writtenAgain` (a compaction that found its session erased
 * while it ran and written again since), the message says so instead of "not written since": the
 * id holds a new life, which the compaction did not touch. With `behind` (a read whose read models
 * had not applied the whole log), the message says up to which position that holds.
 */
export class SessionNotFoundError extends SessionError {
  readonly code = 'session_not_found';
  /**
   * `discardedSummarizerCalls`: what a compaction's pass spent on the summarizer before it found the
   * session gone (`details.discardedSummarizerCalls`; the message then says so). `writtenAgain`:
   * the session was written again after the erasure the pass met (see the class doc). `behind`:
   * how far the read models that found nothing lag the log ({@link sessionNotFoundMessage}).
   */
  constructor(
    sessionId: string,
    erasedAt?: string,
    discardedSummarizerCalls?: SummarizerIdentity,
    readonly writtenAgain = false,
    behind?: ReadModelsBehind,
  ) {
    const details = { ...(erasedAt !== undefined ? { erasedAt } : {}), ...(discardedSummarizerCalls ? { discardedSummarizerCalls } : {}) };
    super(
      sessionNotFoundMessage(sessionId, erasedAt, discardedSummarizerCalls, writtenAgain, behind),
      erasedAt !== undefined || discardedSummarizerCalls ? details : undefined,
    );
  }
}

/**
 * The message of {@link SessionNotFoundError} (its arguments), the one rule for it: never written
 * (or erased, when the erasure is unknown here), erased at `erasedAt` and not written since, or
 * erased while a compaction ran and written again since (`writtenAgain`). With `behind` (read
 * models that have not applied the log up to its head), "never written" and "not written since"
 * hold only up to the position they applied, and the message says so instead of claiming more
 * (`session "s" does not exist as of position 41 of the log, the last the read models applied (its
 * head is 57): no event was appended to it up to there (or it was erased); events appended since,
 * if any, are not applied yet: retry, or pass the position the append answered as minPosition to
 * wait for them`): a read with `minPosition=0`, or one on a replica that did not acknowledge the
 * session's writes, may come before they are applied. Pure.
 */
export function sessionNotFoundMessage(
  sessionId: string,
  erasedAt: string | undefined,
  discardedSummarizerCalls: SummarizerIdentity | undefined,
  writtenAgain: boolean,
  behind?: ReadModelsBehind,
): string {
  const spent = spentCallsNote(discardedSummarizerCalls);
  const id = quoteInput(sessionId);
  if (writtenAgain)
    return `session ${id} was erased ${erasedAt !== undefined ? `at ${erasedAt} ` : ''}while this compaction ran and has been written again since (GET /v1/erasures lists the erasures): the compaction was planned on the erased content and applied nothing to the session as written now; send it again to compact that${spent}`;
  const asOf =
    behind === undefined
      ? ''
      : ` as of position ${behind.checkpoint} of the log, the last the read models applied (${behind.head === null ? 'its head is unknown: the event store does not answer' : `its head is ${behind.head}`})`;
  const since =
    behind === undefined
      ? ''
      : '; events appended since, if any, are not applied yet: retry, or pass the position the append answered as minPosition to wait for them';
  if (erasedAt === undefined)
    return `session ${id} does not exist${asOf}: no event was appended to it${behind === undefined ? '' : ' up to there'} (or it was erased)${since}${spent}`;
  return `session ${id} was erased at ${erasedAt} (its content is gone; GET /v1/erasures lists the erasures) and has not been written since${asOf}${since}${spent}`;
}

/**
 * The end of the message of a compaction's refusal after its pass called the summarizer (empty
 * when it called none): those calls were spent all the same, and the body's
 * `discardedSummarizerCalls` holds them. Pure.
 */
function spentCallsNote(discarded: SummarizerIdentity | undefined): string {
  return discarded ? `; the compaction's ${discarded.calls} summarizer call(s) made before were spent all the same (discardedSummarizerCalls)` : '';
}

/**
 * `err`, a compaction's refusal after its pass called the summarizer (e.g. the 400 naming
 * `strategy` of a compaction by policy whose policy was cleared while the model ran), carrying
 * those calls as the 404 of a session erased meanwhile does: `details.discardedSummarizerCalls`
 * and the same note at the end of its message ({@link sessionNotFoundMessage}). A copy (`err` is
 * not changed); `err` itself when `discarded` is undefined (no call made). Pure.
 */
export function withDiscardedSummarizerCalls<E extends SessionError>(err: E, discarded: SummarizerIdentity | undefined): E {
  if (!discarded) return err;
  const refused = Object.create(Object.getPrototypeOf(err) as object) as E;
  Object.assign(refused, err, { message: `${err.message}${spentCallsNote(discarded)}`, details: { ...err.details, discardedSummarizerCalls: discarded } });
  refused.stack = err.stack;
  return refused;
}

/**
 * The session has no compaction with this id: `session "s1" has no compaction "…"`; for an id that
 * is not even a UUID ({@link COMPACTION_ID_PATTERN}) the message adds so, with
 * {@link COMPACTION_ID_FORM} (`…: it is not a compaction id: compaction ids are UUIDs such as …`).
 */
export class CompactionNotFoundError extends SessionError {
  readonly code = 'compaction_not_found';
  constructor(sessionId: string, compactionId: string) {
    const notAnId = COMPACTION_ID_PATTERN.test(compactionId) ? '' : `: it is not a compaction id: ${COMPACTION_ID_FORM}`;
    super(`session ${quoteInput(sessionId)} has no compaction ${quoteInput(compactionId)}${notAnId}`);
  }
}

/**
 * The message of a failed revision check, in the client's words: `expected` is what the request
 * sent (`no_stream`, `stream_exists` or a revision, decimal), `actual` the session's last revision
 * (decimal) or `no_stream` (the session has no events). `erasedAt` (ISO-8601 UTC, only with
 * `actual` `no_stream`): the session's latest erasure, when it was erased and not written since;
 * the message then says so (`… but the session was erased at 2026-12-07T09:00:00.000Z (its content
 * is gone; GET /v1/erasures lists the erasures) and has no events since: …`) instead of only "has no
 * events", as the 404 of a read of it does ({@link sessionNotFoundMessage}). With `erasedAt` and `lifeStart` (bigint, the
 * first revision of the session's current life, past `expected`): `expected` is a revision of an erased life and the
 * session was written again since; the message says so instead of offering the current revision to retry with, which
 * would write into the new life (newcomer ncfinal74 F1).
 */
export function revisionConflictMessage(expected: string, actual: string, erasedAt?: string, lifeStart?: bigint): string {
  if (actual === 'no_stream') {
    const start = `leave expectedRevision out, or send "no_stream", to start it${erasedAt === undefined ? '' : ' again'}`;
    const none =
      erasedAt === undefined ? 'has no events' : `was erased at ${erasedAt} (its content is gone; GET /v1/erasures lists the erasures) and has no events since`;
    return expected === 'stream_exists'
      ? `expected the session to exist (expectedRevision "stream_exists"), but it ${none}: ${start}`
      : `expected the session's last event at revision ${expected}, but the session ${none}: ${start}`;
  }
  if (expected === 'no_stream')
    return `expected the session not to exist yet (expectedRevision "no_stream"), but its last event is at revision ${actual}: read the session and retry with expectedRevision ${actual}`;
  if (erasedAt !== undefined && lifeStart !== undefined)
    return `expected revision ${expected}, a revision of an earlier life of this session id: the session was erased (latest at ${erasedAt}; GET /v1/erasures lists the erasures) and written again since, its current life beginning with revision ${lifeStart} and its last event at revision ${actual}: what your client holds of the session is gone; read the session as it is now before writing to it`;
  return `expected revision ${expected} but the session's last event is at revision ${actual}: read the session and retry with expectedRevision ${actual}`;
}

/**
 * The append's expected revision did not match the stream. Nothing was written. Message:
 * {@link revisionConflictMessage}. Details: `expected`, `actual`, and `erasedAt` when given (a
 * session erased and not written since, or `expected` of an erased life: `revisionConflict` in
 * read-side/queries/erasure-query looks it up).
 */
export class RevisionConflictError extends SessionError {
  readonly code = 'wrong_expected_revision';
  constructor(expected: string, actual: string, message?: string, erasedAt?: string, lifeStart?: bigint) {
    super(message ?? revisionConflictMessage(expected, actual, erasedAt, lifeStart), {
      expected,
      actual,
      ...(erasedAt !== undefined ? { erasedAt } : {}),
    });
  }

  /**
   * For a write sent without `expectedRevision` (`write`: an `append`, the default, or a `policy`
   * PUT): other writers (other processes, or compactions) moved the session on `attempts` times in
   * a row while it was being decided. Nothing was written; the request can be resent unchanged
   * (ids make an append idempotent; a policy already in force is not written again). `expected` is
   * `any`, what the client sent (no revision of its own); `actual`: the session's last revision
   * seen (decimal string, or `no_stream`).
   */
  static exhausted(attempts: number, actual: string, write: 'append' | 'policy' = 'append'): RevisionConflictError {
    const resend = write === 'append' ? 'events with ids are written once' : 'a policy the session already has is not written again';
    return new RevisionConflictError(
      'any',
      actual,
      `other writers changed the session ${attempts} times in a row while this ${write} was being decided; nothing was written: resend the request unchanged (${resend})`,
    );
  }
}

/**
 * An erasure (`DELETE /v1/sessions/{id}`, which takes no precondition) could not finish because the
 * session, or its tenant's erasure records, kept changing under it: other writers appended to the
 * session every time it tried to delete it at the revision it had just read (nothing was erased),
 * or other erasures' records kept landing while its own was written (the session is deleted, the
 * record not yet). Either way the client sends the DELETE again, best once its writers have
 * stopped: an erasure is idempotent. Carries no details (the revisions it raced for are the
 * service's, not the client's).
 */
export class ErasureInterruptedError extends SessionError {
  readonly code = 'erasure_interrupted';
}

/** An event id was already used in this session for other content. Nothing was written. */
export class DuplicateEventIdConflictError extends SessionError {
  readonly code = 'duplicate_event_id';
  /**
   * `eventId`: the client's id. `differing` (when known): the event's index in the command and the
   * first field whose content differs from the stored event's (native path, and which of the two
   * has it): the error then names that field (its location, restated by the transport as e.g.
   * `messages[2].name`) and says a retry repeats every field as first sent.
   */
  constructor(eventId: string, differing?: { index: number; path: string; stored: boolean; sent: boolean }) {
    const id = quoteInput(eventId);
    if (!differing) {
      super(
        `event id ${id} already exists in this session, with other content or appended by an earlier request together with other events: send only the events not appended yet (a client resending its whole history), use a new id for new content, or retry the original request unchanged`,
        { eventId },
      );
      return;
    }
    // text sent as parts once and as one string the other time: a field of the native event, the same `content` in OpenAI's (newcomer ncint64 F3)
    const partsSide = differing.path === 'textParts' && differing.stored !== differing.sent ? (differing.sent ? 'resent' : 'stored') : null;
    const which = partsSide
      ? `the ${partsSide} event's text is in text parts, the ${partsSide === 'resent' ? 'stored' : 'resent'} one's is one string`
      : differing.stored && !differing.sent
        ? 'the stored event has this field, the resent one does not'
        : !differing.stored && differing.sent
          ? 'the resent event has this field, the stored one does not'
          : 'its value differs from the stored one';
    super(
      `event id ${id} already exists in this session with other content: ${which}. A retry repeats every field as first sent (content is compared field by field as text; an optional field left out differs from one sent): resend it as stored, or use a new id for new content`,
      { eventId },
      { index: differing.index, field: differing.path },
    );
  }
}

/** A tool response answers a call that is not in the session's active window nor earlier in the request. */
export class UnknownToolCallError extends SessionError {
  readonly code = 'unknown_tool_call';
  /** `where`: the request path of the response's call id, or its location in the command. */
  constructor(where: string | EventLocation, toolCallId: string) {
    super(`tool call ${quoteInput(toolCallId)} is not in this session; append the assistant message with that call first`, { toolCallId }, where);
  }
}

/** A tool call or response would make the session invalid for a provider (see ToolCallLedger). */
export class ToolCallConflictError extends SessionError {
  readonly code = 'tool_call_conflict';
  /**
   * `where`: the location of the offending call id in the command; `toolCallId`: that call id
   * (`details.toolCallId`, as `unknown_tool_call` carries it); `reason` says what to fix.
   */
  constructor(where: EventLocation, toolCallId: string, reason: string) {
    super(reason, { toolCallId }, where);
  }
}

/**
 * The append names a `userId` other than the session's owner (the first `userId` appended to it):
 * a session belongs to one user (recall and the session list filter on it). Nothing was written.
 * User ids are compared code point by code point; two that differ only in their Unicode
 * normalization (`café` as NFC and as NFD, as macOS input may give) look alike when quoted, so the
 * message says that is the difference (newcomer ncmultilingual F4).
 */
export class UserIdConflictError extends SessionError {
  readonly code = 'user_id_conflict';
  constructor(userId: string, owner: string) {
    const onlyNormalization = userId.normalize('NFC') === owner.normalize('NFC');
    super(
      `this session belongs to user ${quoteInput(owner)}, not ${quoteInput(userId)}${
        onlyNormalization
          ? ` (the two differ only in their Unicode normalization, e.g. NFC and NFD: user ids are compared code point by code point, not normalized)`
          : ''
      }; send userId ${quoteInput(owner)} or leave it out`,
      { userId: owner },
      'userId',
    );
  }
}

/**
 * Why an event id is refused when a request gives it to two items (400 `invalid_request`, both append routes).
 * `item` names what the request holds: `event` on `/events`, `message` on `/messages` (OpenAI chat messages).
 */
export function duplicateIdInRequest(id: string, item: 'event' | 'message' = 'event'): string {
  return `id ${quoteInput(id)} appears twice in this request: give each ${item} its own id`;
}

/** The request is well-formed JSON but a value is not allowed. `parameter` names it (once a transport restated a located one). */
export class InvalidRequestError extends SessionError {
  readonly code: InvalidRequestCode;
  /**
   * `where`: the parameter, with `message` saying it all (by convention it starts with the
   * parameter); or the location in the command, with `message` the reason alone.
   */
  constructor(where: string | EventLocation, message: string, code: InvalidRequestCode = 'invalid_request') {
    super(message, typeof where === 'string' ? { parameter: where } : undefined, typeof where === 'string' ? undefined : where);
    this.code = code;
  }

  /** The parameter named (a request path); empty while the error is only located in a command. */
  get parameter(): string {
    const parameter = this.details?.parameter;
    return typeof parameter === 'string' ? parameter : '';
  }
}

/**
 * Counting a large request's tokens (or a compaction's text work) off the request thread did not
 * finish within its deadline (the service is overloaded), or too many large texts were already
 * waiting for the same worker thread. Nothing was written; the same request can be retried later
 * (issue 17, item 1).
 */
export class CountingTimeoutError extends SessionError {
  readonly code = 'counting_timeout';
  /**
   * `what`: the work that timed out, e.g. "counting the tokens of this request"; `deadlineMs` in ms
   * (in the details only when it passed); `queueFull`: refused before it started (details
   * `refusal: 'queue_full'`, else `'deadline_passed'`);
   * `retryAfterSeconds`: when to try again, whole seconds, at least 1 (the HTTP answer's `Retry-After`; see `TokenCountingPool`).
   */
  constructor(
    what: string,
    deadlineMs: number,
    queueFull = false,
    readonly retryAfterSeconds = 1,
  ) {
    super(
      queueFull
        ? `${what} was refused: too many large texts are already waiting for its worker thread; retry shortly`
        : `${what} took longer than ${deadlineMs} ms (the service is busy with other large texts); nothing was written: retry shortly or send smaller texts`,
      // a refusal at once passed no deadline: the body says why instead of naming one
      queueFull ? { refusal: 'queue_full' } : { refusal: 'deadline_passed', deadlineMs },
    );
  }
}

/**
 * Counting a large request's tokens (or a compaction's text work) ran past its deadline while it
 * had its worker thread to itself from the start (no other task before it): the work alone costs
 * more than the deadline allows, so the same request would be refused again on an idle service and
 * is not to be retried as it is. Nothing was written. The HTTP answer is 413 without `Retry-After`.
 */
export class CountingTooCostlyError extends SessionError {
  readonly code = 'counting_too_costly';
  /** `what`: the work, e.g. "counting the tokens of this request"; `deadlineMs`: the deadline it ran past alone, in ms (details `deadlineMs`). */
  constructor(what: string, deadlineMs: number) {
    super(
      `${what} ran past its ${deadlineMs} ms deadline with no other large text before it: the same request would be refused again; nothing was written: send less text per request (split large texts across requests or events)`,
      { deadlineMs },
    );
  }
}

/** What {@link RequestExpiredError}'s message says the write deadline counts from when its transport says nothing more. */
export const DEADLINE_COUNTED_FROM_ARRIVAL = 'when this replica received the request';

/**
 * A write request (append, policy, erasure) whose write had not started within its write deadline
 * (`WRITE_DEADLINE_MS`, counted on this replica's monotonic clock from when the request arrived), or
 * whose client was gone (its connection closed) when its write was about to start. Nothing was
 * written, and the request never will be: a client that has not had an answer within the deadline
 * may send it again, on any replica ({@link checkWriteAdmission}).
 */
export class RequestExpiredError extends SessionError {
  readonly code = 'request_expired';
  /**
   * `waitedMs`: how long the request had waited since it arrived (ms); `deadlineMs`: the bound (ms); `clientGone`: its client had
   * closed its connection; `countedFrom`: what the deadline counts from, as the message names it after "counted from" (the
   * transport's {@link WriteAdmission.deadlineCountedFrom}; by default `when this replica received the request`). The message states
   * what was measured, never a cause of the wait the service did not establish (a busy service, a slow upload).
   */
  constructor(waitedMs: number, deadlineMs: number, clientGone: boolean, countedFrom = DEADLINE_COUNTED_FROM_ARRIVAL) {
    super(
      clientGone
        ? `the client of this request closed its connection ${Math.round(waitedMs)} ms after it arrived, before its write started; nothing was written`
        : `this request's write had not started ${Math.round(waitedMs)} ms after it arrived, past the ${deadlineMs} ms write deadline (WRITE_DEADLINE_MS), counted from ${countedFrom}; nothing was written and it never will be: send it again`,
      { deadlineMs },
    );
  }
}

/**
 * The session was erased after this write request arrived (another request, on this replica or
 * another, erased the life of the session the request found, and the session id may have been
 * written again since): the request is never applied to a life of the session that began after it
 * arrived. Nothing was written. An erasure answers instead as the erasure of its life did.
 */
export class SessionErasedMeanwhileError extends SessionError {
  readonly code = 'session_erased';
  /** `sessionId`: the session. */
  constructor(sessionId: string) {
    super(
      `session ${quoteInput(sessionId)} was erased after this request arrived; nothing was written: a write is never applied to a session written again after its erasure. Send it again to write it in the session as it is now`,
    );
  }
}
