/**
 * The one way a URL or connection string is shown in a log line or an error message: with its
 * credentials hidden. Every place that prints a server address (the NATS start-up line, the
 * configuration errors of `DATABASE_URL`, `KURRENTDB_CONNECTION_STRING`, `NATS_URL`,
 * `OPENAI_BASE_URL`) goes through {@link withoutCredentials}.
 */

/**
 * Password-like parameters of a query string or a `key=value` connection string: a name ending in `password`
 * (libpq's), `passwd`, `pwd`, `pass`, `token`, `secret` or `key` (`api_key`, `api-key`, `access_token`, `sslkey`).
 */
const SECRET_PARAMETER = /(?<![\w-])([\w-]*(?:password|passwd|pwd|pass|token|secret|key))=[^&\s]*/gi;

/**
 * `raw` (a URL or connection string, valid or not; with `list`, a comma-separated list of them, as
 * `NATS_URL`) with its secrets masked, everything else kept:
 * - the user part before an `@` (after `scheme://`, or from the start when there is no scheme):
 *   `user:password@` becomes `user:***@`, a lone `token@` (or user name) becomes `***@`. The last
 *   `@` counts, so a password holding an unencoded `@`, `/` or `,` is hidden whole (a path holding an
 *   `@` loses more than needed, never less);
 * - the value of a parameter whose name ends in `password`, `passwd`, `pwd`, `pass`, `token`, `secret` or `key`
 *   (`password=`, `api_key=`, `access_token=`) becomes `***`.
 * Never throws; a string with none of these is returned unchanged.
 */
export function withoutCredentials(raw: string, options: { list?: boolean } = {}): string {
  return options.list ? raw.split(',').map(maskOne).join(',') : maskOne(raw);
}

/** One URL or connection string cut around its user part: `scheme` (`nats://`, or the leading spaces when it has none), `userInfo` (between it and the last `@`, undefined without one), and `rest` (from the host on). */
export interface UrlParts {
  scheme: string;
  userInfo: string | undefined;
  rest: string;
}

/**
 * `entry` (one URL or connection string, valid or not) cut around its user part, as
 * {@link withoutCredentials} reads it: the user part is what comes before the last `@` after
 * `scheme://` (from the start when there is no scheme), so that a password holding an unencoded
 * `@` or `/` is one user part. Never throws. `scheme + (userInfo === undefined ? '' : userInfo + '@') + rest` is `entry`.
 */
export function urlParts(entry: string): UrlParts {
  const scheme = /^\s*[a-z][a-z0-9+.-]*:\/\//i.exec(entry)?.[0] ?? /^\s*/.exec(entry)![0];
  const at = entry.lastIndexOf('@');
  if (at < scheme.length) return { scheme, userInfo: undefined, rest: entry.slice(scheme.length) };
  return { scheme, userInfo: entry.slice(scheme.length, at), rest: entry.slice(at + 1) };
}

/** {@link withoutCredentials} of one URL or connection string. */
function maskOne(entry: string): string {
  const { scheme, userInfo, rest } = urlParts(entry);
  let masked = entry;
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    masked = `${scheme}${colon >= 0 ? `${userInfo.slice(0, colon)}:***` : '***'}@${rest}`;
  }
  return masked.replace(SECRET_PARAMETER, (_all, name: string) => `${name}=***`);
}
