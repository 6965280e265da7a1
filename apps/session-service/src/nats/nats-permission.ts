/** Telling a request the NATS server refused for the user's permissions from other failures. */
import { PermissionViolationError } from '@nats-io/transport-node';

/**
 * True when `err` or one of its causes says the server refused the request for the NATS user's
 * permissions (the client's `RequestError` whose cause is a `PermissionViolationError`: `Permissions
 * Violation for Publish to "$JS.API.STREAM.MSG.GET.<stream>"`), false for anything else (a timeout,
 * a closed connection, a JetStream API error).
 */
export function isPermissionDenied(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) if (e instanceof PermissionViolationError || /permissions violation/i.test(e.message)) return true;
  return false;
}
