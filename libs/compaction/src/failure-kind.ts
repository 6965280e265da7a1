/**
 * The machine-readable kind of a failed compaction pass (`failureKind`), beside its human-readable
 * `reason`: a closed set of stable strings for alerts and dashboards, chosen where the reason is
 * built (the summarizer that failed), so the two never disagree. Pure.
 *
 * - `credentials`: the model endpoint refused the key (HTTP 401 or 403; check `OPENAI_API_KEY`).
 * - `model_not_found`: no such model or route (HTTP 404, or the error code `model_not_found`;
 *   check `SUMMARIZER_MODEL` and `OPENAI_BASE_URL`).
 * - `rate_limited`: HTTP 429 after the retries, a `Retry-After` longer than the service waits, or
 *   the endpoint's rate-limit pause (after an earlier 429) longer than the service waits.
 * - `timeout`: an attempt timed out after the retries (`SUMMARIZER_TIMEOUT_MS`), or the service's
 *   own worker deadline for the extractive summary or the chunk planning (`COUNTING_DEADLINE_MS`).
 * - `unreachable`: the last attempt could not connect (connection refused, host not found: no
 *   request sent); with `calls: 0` when no attempt of the call did (check `OPENAI_BASE_URL`).
 * - `connection_lost`: the connection failed after the request was sent, or while the answer
 *   arrived (the model may have seen the request).
 * - `endpoint_error`: the endpoint failed (HTTP 5xx, 408, 409) after the retries, or asked for a
 *   wait longer than the service waits before retrying one of them, or an error without a status.
 * - `request_rejected`: any other HTTP status the endpoint refused the request with (400, 413,
 *   422, …: e.g. `context_length_exceeded`).
 * - `invalid_reply`: a reply that cannot be a summary: malformed JSON, not a completion (no
 *   choices, no message), blank (empty, whitespace, null content; the extractive summary empty
 *   too), cut off at the output limit (`finish_reason: length`), longer than an event may hold
 *   (`MAX_TEXT_LENGTH`) or than the next chunk's call can carry, not valid Unicode.
 * - `refused`: the model declined (`message.refusal` set, or `finish_reason: content_filter`).
 * - `aborted`: the call was aborted: the service shutting down (`interrupted: "shutdown"`), or the
 *   caller's abort.
 * - `call_limit`: the pass needs more model calls than `SUMMARIZER_MAX_CALLS_PER_PASS` allows (its
 *   input in chunks of `SUMMARIZER_MAX_INPUT_TOKENS`): refused before its first call, or before the
 *   call past the bound when longer replies than planned split the chunks left.
 * - `other`: anything else (a summarizer's programming error, an error of unknown class, a
 *   summarizer that names no kind of the set).
 *
 * A failure of the decision's own append (the store) is never recorded in the log (the command
 * answers 503 `store_unavailable` and writes nothing), so no kind names it.
 */

/** Every {@link CompactionFailureKind}, in the order the module documentation lists them. */
export const COMPACTION_FAILURE_KINDS = [
  'credentials',
  'model_not_found',
  'rate_limited',
  'timeout',
  'unreachable',
  'connection_lost',
  'endpoint_error',
  'request_rejected',
  'invalid_reply',
  'refused',
  'aborted',
  'call_limit',
  'other',
] as const;

/** The kind of a failed compaction pass (see the module documentation). */
export type CompactionFailureKind = (typeof COMPACTION_FAILURE_KINDS)[number];

const KINDS: ReadonlySet<string> = new Set(COMPACTION_FAILURE_KINDS);

/** Whether `value` is one of {@link COMPACTION_FAILURE_KINDS}. Pure. */
export function isCompactionFailureKind(value: unknown): value is CompactionFailureKind {
  return typeof value === 'string' && KINDS.has(value);
}

/**
 * `value` when it is a kind of the closed set, else `other` (a summarizer of another build, or a
 * custom one, that names no kind or one outside the set): what is recorded, counted and labelled
 * is always one of {@link COMPACTION_FAILURE_KINDS}. Pure.
 */
export function compactionFailureKind(value: unknown): CompactionFailureKind {
  return isCompactionFailureKind(value) ? value : 'other';
}
