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
 * With `everyQueryValue` (a model endpoint's URL, `OPENAI_BASE_URL`, whose query may carry any credential: an Azure SAS
 * `sig=`, an OAuth `code=`), the value of every parameter after the `?` (and after a `#`) becomes `***` whatever its
 * name (`?api-version=***&sig=***`), and a part without `=` (a bare token) becomes `***` whole.
 * Never throws; a string with none of these is returned unchanged.
 */
export function withoutCredentials(raw: string, options: { list?: boolean; everyQueryValue?: boolean } = {}): string {
  const mask = (entry: string): string => maskOne(entry, options.everyQueryValue === true);
  return options.list ? raw.split(',').map(mask).join(',') : mask(raw);
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

/** {@link withoutCredentials} of one URL or connection string; `everyQueryValue`: its option. */
function maskOne(entry: string, everyQueryValue: boolean): string {
  const { scheme, userInfo, rest } = urlParts(entry);
  const shownRest = everyQueryValue ? withoutQueryValues(rest) : rest;
  let masked = scheme + (userInfo === undefined ? '' : `${userInfo}@`) + shownRest;
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    masked = `${scheme}${colon >= 0 ? `${userInfo.slice(0, colon)}:***` : '***'}@${shownRest}`;
  }
  return masked.replace(SECRET_PARAMETER, (_all, name: string) => `${name}=***`);
}

/**
 * `rest` (a URL from its host on) with the value of each parameter of its query and fragment masked: the text
 * after the first `?` or `#`, cut at `&`, `#` and `?`, each `name=value` shown `name=***`, a part without `=` as `***`,
 * empty parts kept (`/v1?api-version=2024-10-21&sig=abc#f` → `/v1?api-version=***&sig=***#***`).
 */
function withoutQueryValues(rest: string): string {
  const start = rest.search(/[?#]/);
  if (start < 0) return rest;
  const masked = rest.slice(start + 1).replace(/[^&#?]+/g, (part) => (part.includes('=') ? `${part.slice(0, part.indexOf('='))}=***` : '***'));
  return rest.slice(0, start + 1) + masked;
}
