/**
 * Errors of the session domain. Each carries a stable `code` (the HTTP layer maps codes to
 * statuses and returns `{ code, message }`) and a message that says what to fix.
 */

/** Base class: `code` is stable and documented; `status` is the HTTP status the API answers with. */
export abstract class SessionError extends Error {
  abstract readonly code: string;
  abstract readonly status: number;
  /** Extra fields returned to the client (e.g. expected and actual revisions). */
  readonly details?: Record<string, unknown>;
  constructor(message: string, details?: Record<string, unknown>) {
    super(message);
    this.details = details;
  }
}

/** 404: no event was ever appended to this session (or it was erased). */
export class SessionNotFoundError extends SessionError {
  readonly code = 'session_not_found';
  readonly status = 404;
  constructor(sessionId: string) {
    super(`session ${JSON.stringify(sessionId)} does not exist: append events to it first`);
  }
}

/** 404: the session has no compaction with this id. */
export class CompactionNotFoundError extends SessionError {
  readonly code = 'compaction_not_found';
  readonly status = 404;
  constructor(sessionId: string, compactionId: string) {
    super(`session ${JSON.stringify(sessionId)} has no compaction ${JSON.stringify(compactionId)}`);
  }
}

/** 409: the append's expected revision did not match the stream. Nothing was written. */
export class RevisionConflictError extends SessionError {
  readonly code = 'wrong_expected_revision';
  readonly status = 409;
  constructor(expected: string, actual: string) {
    super(`expected revision ${expected} but the session is at ${actual}: read the session and retry with expectedRevision ${actual}`, {
      expected,
      actual,
    });
  }
}

/** 409: an event id was already used in this session for other content. Nothing was written. */
export class DuplicateEventIdConflictError extends SessionError {
  readonly code = 'duplicate_event_id';
  readonly status = 409;
  constructor(eventId: string) {
    super(
      `event id ${JSON.stringify(eventId)} already exists in this session, with other content or appended by an earlier request together with other events: use a new id, or retry the original request unchanged`,
      {
        eventId,
      },
    );
  }
}

/** 422: a tool response answers a call that is not in the session's active window nor earlier in the request. */
export class UnknownToolCallError extends SessionError {
  readonly code = 'unknown_tool_call';
  readonly status = 422;
  /** `parameter`: the JSON path of the response's call id in the request. */
  constructor(parameter: string, toolCallId: string) {
    super(`${parameter}: tool call ${JSON.stringify(toolCallId)} is not in this session; append the assistant message with that call first`, {
      parameter,
      toolCallId,
    });
  }
}

/** 422: a tool call or response would make the session invalid for a provider (see ToolCallLedger). */
export class ToolCallConflictError extends SessionError {
  readonly code = 'tool_call_conflict';
  readonly status = 422;
  /** `parameter`: the JSON path of the offending call id in the request. */
  constructor(parameter: string, message: string) {
    super(message, { parameter });
  }
}

/** 400: the request is well-formed JSON but a value is not allowed. `parameter` names it. */
export class InvalidRequestError extends SessionError {
  readonly code: string;
  readonly status = 400;
  constructor(
    readonly parameter: string,
    message: string,
    code = 'invalid_request',
  ) {
    super(message, { parameter });
    this.code = code;
  }
}
