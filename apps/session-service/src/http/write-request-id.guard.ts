/**
 * A write's `X-Request-Id` is kept or the write refused, never replaced (newcomer ncbounds): on a
 * write the client's id carries meaning beyond the logs — a `DELETE /v1/sessions/{id}` resent
 * under it is recognised and answered, erasing nothing of a later life; a compaction's decision,
 * an erasure record and a policy event name it as `requestedBy.requestId` with `requestIdFrom` `client`. An id
 * the service cannot use (`request-id.ts`: over 128 characters, a space, a byte outside printable
 * ASCII, empty, or the header sent twice) was replaced by a made-up UUID without a word, so the
 * DELETE erased, and its resend, also replaced, was not recognised and erased the life written
 * since. Every write route (every method but GET and HEAD: both appends, compactions, the policy,
 * the erasure) refuses it with 400 `validation_failed`, `parameter` `X-Request-Id`, before
 * anything is read from the store or written. Reads keep the replacement: their id only names the
 * request in the logs and the answer's header. Applied after `ApiKeyGuard` (401 first) and
 * the query and precondition checks.
 */
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { InvalidRequestError } from '@lib/session';
import { REQUEST_ID_RULE, requestIdHeaderProblem } from '../observability/request-id';

/** The `parameter` a refused request id is named by: the header as clients write it. */
export const REQUEST_ID_PARAMETER = 'X-Request-Id';

/**
 * The refusal of a write whose request (`req`, the raw Node request) carries an unusable
 * `X-Request-Id` ({@link requestIdHeaderProblem}): 400 `validation_failed`, `parameter`
 * `X-Request-Id`, the message saying what is wrong, the rule and what to fix, e.g. `X-Request-Id:
 * the id is 129 characters long, over the 128 allowed: shorten it (…). A write takes an
 * X-Request-Id of 1 to 128 printable ASCII characters …`. Undefined for a request without the
 * header or with a usable one.
 */
export function writeRequestIdRefusal(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): InvalidRequestError | undefined {
  const problem = requestIdHeaderProblem(req);
  if (problem === undefined) return undefined;
  return new InvalidRequestError(
    REQUEST_ID_PARAMETER,
    `${REQUEST_ID_PARAMETER}: the id ${problem}. A write takes an ${REQUEST_ID_PARAMETER} of ${REQUEST_ID_RULE}, or none; ` +
      'send the same one on every resend of the write, so that the resend is recognised. Nothing was written',
    'validation_failed',
  );
}

/** Refuses a write request with an unusable `X-Request-Id` ({@link writeRequestIdRefusal}); see the module doc. */
@Injectable()
export class WriteRequestIdGuard implements CanActivate {
  /** @throws InvalidRequestError (400 `validation_failed`, `parameter` `X-Request-Id`) on a write with an unusable `X-Request-Id`. */
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ method: string; raw: IncomingMessage }>();
    if (request.method === 'GET' || request.method === 'HEAD') return true;
    const refusal = writeRequestIdRefusal(request.raw);
    if (refusal) throw refusal;
    return true;
  }
}
