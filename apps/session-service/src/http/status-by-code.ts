/**
 * The one place where domain error codes become HTTP statuses. The record is typed over every
 * {@link SessionErrorCode}, so a new code does not compile until it has a status here.
 */
import type { SessionErrorCode } from '@lib/session';

/** HTTP status answered for each domain error code (README error table). */
export const STATUS_BY_CODE: Readonly<Record<SessionErrorCode, number>> = {
  invalid_request: 400,
  invalid_message: 400,
  invalid_parameter: 400,
  invalid_session_id: 400,
  invalid_query: 400,
  revision_out_of_range: 400,
  position_out_of_range: 400,
  validation_failed: 400,
  session_not_found: 404,
  compaction_not_found: 404,
  wrong_expected_revision: 409,
  duplicate_event_id: 409,
  user_id_conflict: 409,
  unknown_tool_call: 422,
  tool_call_conflict: 422,
  projection_behind: 503,
  counting_timeout: 503,
};
