/** The error of a request body cut short: answered 400 `request_aborted` (nothing was written). */

/**
 * A request whose connection closed, or whose client half-closed it (`half-close.ts`), before its
 * whole body arrived: body-parser's `type` `request.aborted` and status 400, answered 400
 * `request_aborted` (nothing was written).
 */
export function requestAbortedError(): Error {
  return Object.assign(new Error('request aborted: the connection closed before the whole body arrived'), {
    type: 'request.aborted',
    status: 400,
    statusCode: 400,
    expose: true,
  });
}
