/**
 * Every error code the service answers, with its HTTP status: the one list. The error filter maps
 * domain errors to statuses with it ({@link statusOfCode}), every error body the service builds
 * is typed by it ({@link ApiErrorCode}: a code missing here does not compile), and the OpenAPI
 * document declares it (the `ErrorCode` enum and, per route, the codes of each status it answers;
 * see `response-schemas.ts`), so the document, the generated client and the server cannot
 * disagree on which codes exist.
 */
import type { SessionErrorCode, SessionErrorDetails } from '@lib/session';

/** What the document says of one code. */
export interface ErrorCodeInfo {
  /** The HTTP status answered with it (NATS answers carry the same status). */
  status: number;
  /** When it is answered, in a few words. */
  description: string;
  /** The details every answer with this code carries (the document makes them required for it). */
  details?: ReadonlyArray<keyof SessionErrorDetails>;
  /** `nats`: answered only to NATS commands (their subject, headers or tenant); else HTTP (and NATS where the same check applies). */
  transport?: 'nats';
  /**
   * Every HTTP answer with this code carries a `Retry-After` header (whole seconds): what its
   * value is, in a few words. The OpenAPI document declares the header on the statuses of such
   * codes (see `response-schemas.ts`).
   */
  retryAfter?: string;
}

/** Every code, by name (the error table of docs/http-api.md says more of each). */
export const API_ERROR_CODES = {
  validation_failed: {
    status: 400,
    description:
      'a body field or query parameter is invalid, unknown or given twice, an identity filter (userId, compactionId) is sent empty, or a DELETE carries a body (parameter names it; (body) for the whole body); a missing required field also names the unknown keys sent beside it, suggesting a near miss (did you mean …?)',
    details: ['parameter'],
  },
  invalid_parameter: {
    status: 400,
    description:
      'a strategy or trigger parameter is invalid (e.g. strategy.maxEvents); on POST …/compactions also strategy left out on a session without a policy, and trigger or estimator sent without a strategy',
    details: ['parameter'],
  },
  invalid_message: { status: 400, description: 'an OpenAI message of POST …/messages is invalid (parameter names the field)', details: ['parameter'] },
  invalid_query: { status: 400, description: "recall's q, or a list or recall cursor, is invalid" },
  cursor_expired: {
    status: 400,
    description: 'the list or recall cursor was made by another release of the service (e.g. during a rolling upgrade): search or list again without cursor',
  },
  invalid_request: { status: 400, description: 'a value is not allowed, e.g. one id given to two events of a request' },
  invalid_session_id: {
    status: 400,
    description:
      "a session id (in the path or recall's sessionId filter) is not 1 to 128 ASCII letters, digits or _ - : @ . (recall's sessionId sent empty too)",
    details: ['parameter'],
  },
  invalid_path: { status: 400, description: 'the path is not valid percent-encoded UTF-8' },
  invalid_query_encoding: {
    status: 400,
    description: 'a query parameter name or value is not valid percent-encoded UTF-8 (parameter names it)',
    details: ['parameter'],
  },
  malformed_request: {
    status: 400,
    description:
      'not HTTP/1.1 (or 1.0) Node can parse (e.g. an unknown method, unencoded characters in the URL, lines ending in a bare LF), an HTTP/1.1 request without a Host header, a request target holding # (a fragment is never sent), or a request line naming another version than HTTP/1.1 or 1.0 (HTTP/2.0, or none)',
  },
  unsupported_expectation: { status: 417, description: 'an Expect header other than 100-continue (the only expectation the service meets)' },
  malformed_json: {
    status: 400,
    description:
      'the body is not JSON (the message says where it breaks), nests too deep, or gives a member name twice in one object (the message names it, its path and where)',
  },
  malformed_body: { status: 400, description: 'the body is not valid UTF-8, or does not match its Content-Encoding' },
  request_aborted: {
    status: 400,
    description:
      'the connection closed, or the client half-closed it, before the whole body arrived (a client that half-closed reads this answer); nothing written',
  },
  revision_out_of_range: { status: 400, description: "atRevision is outside the session's revisions" },
  time_out_of_range: { status: 400, description: "atTime is before the session's first event was recorded (the message names when it was)" },
  position_out_of_range: { status: 400, description: 'minPosition is past the end of the log' },
  unknown_command: { status: 400, description: 'the subject does not end in compact, append, messages or policy', transport: 'nats' },
  invalid_subject: { status: 400, description: 'the subject is not <prefix>.commands.<tenant>.<session>.<kind>', transport: 'nats' },
  invalid_reply_to: {
    status: 400,
    description: 'Reply-To (its name in any letter case) is not a reply inbox, is empty, or is given twice with different values; nothing applied',
    transport: 'nats',
  },
  invalid_command_id: {
    status: 400,
    description:
      'with API_KEYS, Nats-Msg-Id does not start with <tenant>: or has nothing after it; or the id is sent only under another spelling of Nats-Msg-Id (e.g. nats-msg-id), which JetStream does not de-duplicate on',
    transport: 'nats',
  },
  unauthorized: {
    status: 401,
    description: 'API keys are configured and the request has none or an unknown one, or gives Authorization or X-Api-Key on two header lines',
  },
  host_not_allowed: {
    status: 403,
    description:
      'open development mode (no API_KEYS) and the Host header is not localhost, *.localhost, an IP address or a name of ALLOWED_HOSTS (against DNS rebinding)',
  },
  unknown_tenant: { status: 403, description: 'the subject names a tenant this service does not serve', transport: 'nats' },
  session_not_found: {
    status: 404,
    description:
      'no event was ever appended to the session (or it was erased), or it is another tenant’s (read models behind the log’s head, as with minPosition=0, say up to which position: later events are not applied yet); every route that addresses one session (its summary, window, log, policy, compactions; POST …/compactions, PUT …/policy clearing it) of an erased session id adds erasedAt, when it was erased, as GET /v1/sessions/{sessionId} does',
  },
  compaction_not_found: { status: 404, description: 'the session has no compaction with this id' },
  route_not_found: { status: 404, description: 'no such route (also a route’s path with a trailing slash)' },
  method_not_allowed: {
    status: 405,
    description:
      'the path exists but not with this method (the Allow header lists its methods); also any CONNECT (the service is no proxy; the connection is closed)',
  },
  request_timeout: { status: 408, description: 'the request (head and body) did not arrive within REQUEST_TIMEOUT_MS; the connection is closed' },
  wrong_expected_revision: {
    status: 409,
    description: "expectedRevision does not match the session's last revision (expected and actual say both); nothing written",
    details: ['expected', 'actual'],
  },
  erasure_interrupted: {
    status: 409,
    description:
      "DELETE only: other writers kept appending to the session while it was being erased (nothing erased), or other erasures' records kept landing while its record was written (session deleted, not yet recorded); no precondition of the request failed: send the DELETE again, best once the session's writers have stopped",
  },
  session_erased: {
    status: 409,
    description:
      'the session was erased after this write request arrived (and may have been written again since): a write is never applied to a later life of the session; nothing written: send it again to write it in the session as it is now',
  },
  duplicate_event_id: {
    status: 409,
    description: 'an event id is already used in the session for other content (eventId names it); nothing written',
    details: ['eventId'],
  },
  user_id_conflict: {
    status: 409,
    description: 'the session belongs to another user (userId names the owner); nothing written',
    details: ['userId', 'parameter'],
  },
  payload_too_large: { status: 413, description: 'the body (inflated) is larger than MAX_BODY_BYTES' },
  uri_too_long: { status: 414, description: 'the request line is over 16 KiB (or a path segment over the router’s limit)' },
  unsupported_media_type: {
    status: 415,
    description: 'the body is not declared JSON, or its Content-Type is given twice: send one Content-Type: application/json (or application/*+json)',
  },
  unsupported_encoding: {
    status: 415,
    description: 'a Content-Encoding other than one of gzip, deflate (the zlib format) or br (named in the message), or a charset other than UTF-8',
  },
  unknown_tool_call: {
    status: 422,
    description: 'a tool response answers a call never made in the session (toolCallId names it)',
    details: ['toolCallId'],
  },
  tool_call_conflict: {
    status: 422,
    description: 'a tool call id repeated or reused while open, or a second answer to a call (toolCallId names the call id)',
    details: ['toolCallId'],
  },
  rate_limited: {
    status: 429,
    description: 'too many requests this minute: retry after Retry-After seconds',
    retryAfter: 'seconds until the rate limit lets this tenant (all its keys share one budget; without a known key, this client address) in again',
  },
  headers_too_large: { status: 431, description: 'the request headers are over 16 KiB' },
  internal: { status: 500, description: 'an unexpected error (logged); the request may be retried' },
  unsupported_transfer_coding: {
    status: 501,
    description:
      'a Transfer-Encoding other than chunked (e.g. gzip, chunked), on any route, before the body is read; the connection is closed: send Transfer-Encoding: chunked only, and compress with Content-Encoding',
  },
  projection_behind: {
    status: 503,
    description: 'the read models have not reached minPosition (or this service’s own last write) within MAX_WAIT_MS; retry',
    details: ['checkpoint'],
  },
  store_unavailable: {
    status: 503,
    description:
      'the event store does not answer: nothing written, retry; except with mayHaveBeenWritten true (a write sent whose outcome is unknown): send the same request again unchanged',
    details: ['mayHaveBeenWritten'],
    retryAfter: '2 (a moment before trying again; the store may stay unavailable longer: GET /health says why)',
  },
  store_corrupt: {
    status: 503,
    description: "the event store's file is damaged: nothing is written until it is restored from a backup and the service restarted (/health names the file)",
  },
  read_models_off_log: {
    status: 503,
    description:
      "this replica's read models come from another log than the event store's (the store was restored from a backup, or replaced, while it ran): read from another replica; stop this one, run npm run rebuild-read-models (or delete read-models.sqlite) and start it",
  },
  read_models_damaged: {
    status: 503,
    description: 'the read models file (read-models.sqlite) is damaged: restart the service, which moves it aside and rebuilds it from the log',
  },
  counting_timeout: {
    status: 503,
    description:
      "counting a large request's tokens took too long (refusal deadline_passed, with deadlineMs), or too many were waiting (refusal queue_full, refused at once); nothing written, retry after Retry-After seconds",
    details: ['refusal'],
    retryAfter: 'seconds the counting thread needs for the requests it holds, 1 to the counting deadline in seconds (COUNTING_DEADLINE_MS, 30 by default)',
  },
  counting_too_costly: {
    status: 413,
    description:
      "counting a large request's tokens (or a compaction's text work) ran past its deadline (deadlineMs) with no other large text before it: it would be refused again; nothing written: send less text per request",
    details: ['deadlineMs'],
  },
  request_expired: {
    status: 503,
    description:
      'the write could not start within WRITE_DEADLINE_MS of the request reaching this replica (deadlineMs), or its client had closed the connection: nothing written, and it never will be: send it again',
    details: ['deadlineMs'],
  },
  shutting_down: { status: 503, description: 'the service is shutting down (Retry-After: 1); nothing written, retry', retryAfter: '1' },
} as const satisfies Record<string, ErrorCodeInfo>;

/** An error code the service answers. */
export type ApiErrorCode = keyof typeof API_ERROR_CODES;

/** Every code, in the order of {@link API_ERROR_CODES}. */
export const ALL_ERROR_CODES = Object.keys(API_ERROR_CODES) as ApiErrorCode[];

// Every code of the domain's errors is declared (this line does not compile otherwise).
const _domainCodesDeclared: readonly ApiErrorCode[] = [] as SessionErrorCode[];
void _domainCodesDeclared;

/** The HTTP status of `code` (the error table of docs/http-api.md). */
export function statusOfCode(code: ApiErrorCode): number {
  return API_ERROR_CODES[code].status;
}

/** True when `code` is a declared error code (an own key of {@link API_ERROR_CODES}). */
export function isApiErrorCode(code: unknown): code is ApiErrorCode {
  return typeof code === 'string' && Object.hasOwn(API_ERROR_CODES, code);
}

/**
 * The codes a route may answer, by what the route has (each route's `@ApiAnswer` lists the sets
 * that apply and its own codes; the OpenAPI document declares them per status).
 */
export const ROUTE_ERRORS = {
  /**
   * Every route: what Node's parser, the router and the shutdown answer before any handler, and an
   * unexpected error; also a body over MAX_BODY_BYTES, refused by its length before the route is
   * known (a read route ignores a smaller body; newcomer ncopenapifuzz F2: a GET's 413 was undeclared).
   */
  any: [
    'malformed_request',
    'payload_too_large',
    'unsupported_expectation',
    'invalid_query_encoding',
    'request_timeout',
    'uri_too_long',
    'headers_too_large',
    'internal',
    'unsupported_transfer_coding',
    'shutting_down',
  ] as ApiErrorCode[],
  /** Every `/v1` route: the API key, the rate limit, and query parameters (unknown, repeated, or on a write route). */
  v1: ['unauthorized', 'host_not_allowed', 'rate_limited', 'validation_failed'] as ApiErrorCode[],
  /** A route with path parameters (`/v1/sessions/{sessionId}…`). */
  sessionPath: ['invalid_path', 'invalid_session_id'] as ApiErrorCode[],
  /** A route with a JSON body. */
  body: ['malformed_json', 'malformed_body', 'request_aborted', 'payload_too_large', 'unsupported_media_type', 'unsupported_encoding'] as ApiErrorCode[],
  /** A write (it appends to the store). */
  write: ['store_unavailable', 'store_corrupt'] as ApiErrorCode[],
  /** A read of the read models, which takes `minPosition` (or waits for this service's own writes). */
  read: ['position_out_of_range', 'projection_behind', 'store_unavailable', 'store_corrupt', 'read_models_off_log', 'read_models_damaged'] as ApiErrorCode[],
} as const;

/** The codes of `sets` and `own`, each once, in the order of {@link API_ERROR_CODES}. */
export function routeErrors(sets: ReadonlyArray<keyof typeof ROUTE_ERRORS>, own: readonly ApiErrorCode[] = []): ApiErrorCode[] {
  const codes = new Set<ApiErrorCode>([...sets.flatMap((set) => ROUTE_ERRORS[set]), ...own]);
  return ALL_ERROR_CODES.filter((code) => codes.has(code));
}
