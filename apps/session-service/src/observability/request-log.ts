/**
 * What one request's log line says about the request and its answer (pino-http serializers):
 * method, path (no query string: it may carry search text) and status; never headers or bodies.
 * Values the client chooses are cut to {@link MAX_LOGGED_VALUE_LENGTH}: a 5,000-character session
 * id must not make a 5 KB log line.
 */

/** Longest request value (path, method) logged as is, in UTF-16 code units; longer ones are cut with a marker. */
export const MAX_LOGGED_VALUE_LENGTH = 256;

/**
 * `value` when it has at most `max` UTF-16 code units; else its first `max` (one fewer rather than
 * half a surrogate pair) followed by `…(N more characters)`, N being what was cut.
 */
export function truncatedForLog(value: string, max = MAX_LOGGED_VALUE_LENGTH): string {
  if (value.length <= max) return value;
  const last = value.charCodeAt(max - 1);
  const kept = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${value.slice(0, kept)}…(${value.length - kept} more characters)`;
}

/** pino-http serializers of the request log line: `req` → `{ method, url }` (path only, both cut by {@link truncatedForLog}), `res` → `{ statusCode }`. */
export const requestLogSerializers = {
  req: (req: { method: string; url: string }) => ({ method: truncatedForLog(req.method), url: truncatedForLog(req.url.split('?')[0]) }),
  res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
};
