/**
 * Errors of the session domain. Each carries a stable `code` and a message that says what to fix.
 * Transports decide what a code means to their callers (the HTTP app maps each code to a status
 * in one table); nothing here knows about HTTP.
 */

/** Every code a {@link SessionError} can carry (stable, documented in the README). */
export type SessionErrorCode =
  | 'session_not_found'
  | 'compaction_not_found'
  | 'wrong_expected_revision'
  | 'duplicate_event_id'
  | 'unknown_tool_call'
  | 'tool_call_conflict'
  | 'projection_behind'
  | 'counting_timeout'
  | InvalidRequestCode;

/** Codes of {@link InvalidRequestError}: the request is understood but a value is not allowed. */
export type InvalidRequestCode =
  'invalid_request' | 'invalid_message' | 'invalid_parameter' | 'invalid_session_id' | 'revision_out_of_range' | 'validation_failed' | 'invalid_query';

/** Base class: `code` is stable and documented. */
export abstract class SessionError extends Error {
  abstract readonly code: SessionErrorCode;
  /** Extra fields returned to the client (e.g. expected and actual revisions). */
  readonly details?: Record<string, unknown>;
  constructor(message: string, details?: Record<string, unknown>) {
    super(message);
    this.details = details;
  }
}

/** No event was ever appended to this session (or it was erased). */
export class SessionNotFoundError extends SessionError {
  readonly code = 'session_not_found';
  constructor(sessionId: string) {
    super(`session ${JSON.stringify(sessionId)} does not exist: append events to it first`);
  }
}

/** The session has no compaction with this id. */
export class CompactionNotFoundError extends SessionError {
  readonly code = 'compaction_not_found';
  constructor(sessionId: string, compactionId: string) {
    super(`session ${JSON.stringify(sessionId)} has no compaction ${JSON.stringify(compactionId)}`);
  }
}

/** The append's expected revision did not match the stream. Nothing was written. */
export class RevisionConflictError extends SessionError {
  readonly code = 'wrong_expected_revision';
  constructor(expected: string, actual: string) {
    super(`expected revision ${expected} but the session is at ${actual}: read the session and retry with expectedRevision ${actual}`, {
      expected,
      actual,
    });
  }
}

/** An event id was already used in this session for other content. Nothing was written. */
export class DuplicateEventIdConflictError extends SessionError {
  readonly code = 'duplicate_event_id';
  constructor(eventId: string) {
    super(
      `event id ${JSON.stringify(eventId)} already exists in this session, with other content or appended by an earlier request together with other events: use a new id, or retry the original request unchanged`,
      {
        eventId,
      },
    );
  }
}

/** A tool response answers a call that is not in the session's active window nor earlier in the request. */
export class UnknownToolCallError extends SessionError {
  readonly code = 'unknown_tool_call';
  /** `parameter`: the JSON path of the response's call id in the request. */
  constructor(parameter: string, toolCallId: string) {
    super(`${parameter}: tool call ${JSON.stringify(toolCallId)} is not in this session; append the assistant message with that call first`, {
      parameter,
      toolCallId,
    });
  }
}

/** A tool call or response would make the session invalid for a provider (see ToolCallLedger). */
export class ToolCallConflictError extends SessionError {
  readonly code = 'tool_call_conflict';
  /** `parameter`: the JSON path of the offending call id in the request. */
  constructor(parameter: string, message: string) {
    super(message, { parameter });
  }
}

/** The request is well-formed JSON but a value is not allowed. `parameter` names it. */
export class InvalidRequestError extends SessionError {
  readonly code: InvalidRequestCode;
  constructor(
    readonly parameter: string,
    message: string,
    code: InvalidRequestCode = 'invalid_request',
  ) {
    super(message, { parameter });
    this.code = code;
  }
}

/**
 * Counting a large request's tokens off the request thread did not finish within its deadline
 * (the service is overloaded), or too many large requests were already waiting. Nothing was
 * written; the same request can be retried later (issue 17, item 1).
 */
export class CountingTimeoutError extends SessionError {
  readonly code = 'counting_timeout';
  /** `what`: the work that timed out, e.g. "counting the tokens of this request"; `deadlineMs` in ms; `queueFull`: refused before it started. */
  constructor(what: string, deadlineMs: number, queueFull = false) {
    super(
      queueFull
        ? `${what} was refused: too many large requests are waiting to be counted; retry shortly`
        : `${what} took longer than ${deadlineMs} ms (the service is busy with other large texts); nothing was written: retry shortly or send smaller texts`,
      { deadlineMs },
    );
  }
}
