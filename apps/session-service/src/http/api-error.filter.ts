/**
 * Turns every error into `{ "code": "...", "message": "..." }` with the right status:
 * domain errors (SessionError and subclasses) by their code, with the status of `error-codes.ts` ({@link statusOfCode}), invalid strategy or
 * trigger parameters → 400 `invalid_parameter`, malformed JSON → 400 `malformed_json` (saying where it breaks), oversized
 * bodies → 413 `payload_too_large`, unknown routes and files the audit page's file server refuses
 * (a path leaving `/ui`) → 404 `route_not_found`, rate limit → 429
 * `rate_limited`, an unreachable store → 503 `store_unavailable` (with `mayHaveBeenWritten`), a counting queue too long → 503
 * `counting_timeout` (with `Retry-After`), a damaged event store file → 503
 * `store_corrupt`, a damaged read-models file → 503 `read_models_damaged`, anything else (an HTTP exception
 * of another status included: every code answered is one of `error-codes.ts`) → 500 `internal`
 * (logged without request content). A 503 (`projection_behind`, `store_unavailable`,
 * `counting_timeout`: the client retries) is an expected answer: its request line logs at warn
 * without a made-up error and stack ({@link markExpectedAnswer}).
 */
import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InvalidParameterError, MAX_SHADOW_PROMPT_LENGTH, MAX_SYSTEM_PROMPT_LENGTH, quoteInput } from '@lib/compaction';
import {
  EventStoreClosedError,
  EventStoreCorruptError,
  EventStoreReplacedError,
  EventStoreUnavailableError,
  PostgresNoAnswerError,
  isClosedBeforePostgresAnswer,
  isSqliteDiskFull,
  isSqliteWriteFailure,
  postgresCauseOf,
  postgresConnectionCauseOf,
} from '@lib/event-store';
import {
  CountingTimeoutError,
  READ_MODEL_SCHEMA_VERSION,
  ReadModelsFullError,
  ReadModelsOffLogWriteError,
  ReadModelsAlteredError,
  ReadModelsReplacedError,
  SessionError,
  isReadModelsDamage,
} from '@lib/session';
import { isApiErrorCode, statusOfCode, type ApiErrorCode } from './error-codes';
import { BodyTooDeepError } from '../commands/body-depth';
import { JSON_CONTENT_TYPE_RULE, MalformedJsonError } from './json-body';
import { markExpectedAnswer } from '../observability/request-log-level';
import { RateLimitedWarnings } from '../observability/rate-limited-lines';
import { ReadModelsDamage } from '../observability/read-models-damage';

/** The JSON body of every error answer: a declared code ({@link ApiErrorCode}), what to fix, and the error's details. */
export interface ApiErrorBody {
  code: ApiErrorCode;
  message: string;
  [detail: string]: unknown;
}

/** `bytes` for people: `5 MiB`, `19.5 KiB`, `512 bytes` (binary units, at most one decimal). */
export function humanBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : Number(value.toFixed(1))} ${units[unit]}`;
}

/**
 * How to bring a body under `MAX_BODY_BYTES`, by what the body holds, the one rule of the HTTP 413
 * and the NATS one: `route` is a URL path (`/v1/sessions/s/events?…`) or a NATS command kind
 * (`append`, `messages`, `policy`, `compact`). Appends: split the events (`unit`: `requests` or
 * `commands`); a policy or compaction body holds no events, only a strategy whose prompts are its
 * large part: shorten them; anything else (or unknown): a smaller body.
 */
export function tooLargeAdvice(route: string | undefined, unit: 'requests' | 'commands' = 'requests'): string {
  const kind = /(?:^|\/)(events|messages|append|policy|compactions|compact)$/.exec((route ?? '').split('?')[0])?.[1];
  if (kind === 'events' || kind === 'append' || kind === 'messages')
    return `split the ${kind === 'messages' ? 'messages' : 'events'} into several ${unit}, in order`;
  if (kind === 'policy' || kind === 'compactions' || kind === 'compact')
    return `this body holds no events: shorten the strategy's prompts (systemPrompt at most ${MAX_SYSTEM_PROMPT_LENGTH.toLocaleString('en-US')} characters, shadowPrompt at most ${MAX_SHADOW_PROMPT_LENGTH.toLocaleString('en-US')})`;
  return 'send a smaller body';
}

/**
 * The 413 `payload_too_large` answer's body: names `MAX_BODY_BYTES` and, when known, its value
 * (`limitBytes`, in bytes and in {@link humanBytes}), and what to do on the route of `path` (the
 * request's URL: {@link tooLargeAdvice}).
 */
export function payloadTooLarge(limitBytes?: number, path?: string): ApiErrorBody {
  const limit = limitBytes === undefined ? 'the limit (MAX_BODY_BYTES)' : `MAX_BODY_BYTES (${limitBytes} bytes, ${humanBytes(limitBytes)})`;
  return { code: 'payload_too_large', message: `request body is larger than ${limit}; ${tooLargeAdvice(path)}` };
}

/**
 * The 415 `unsupported_encoding` answer's body for a `Content-Encoding` the service does not read,
 * naming it as sent (lower-cased by body-parser; `encoding` undefined: not named): only one coding,
 * gzip (also `x-gzip`), deflate (the zlib format) or br, or none. A list of codings (`gzip, gzip`,
 * legal by RFC 9110 §8.4) is refused as such.
 */
export function unsupportedContentEncoding(encoding: unknown): ApiErrorBody {
  const sent = typeof encoding === 'string' ? ` ${quoteInput(encoding)}` : '';
  const list = typeof encoding === 'string' && encoding.includes(',') ? ' (a list of codings is not read)' : '';
  return {
    code: 'unsupported_encoding',
    message: `unsupported Content-Encoding${sent}${list}: send the body uncompressed, or compressed once with a single coding: gzip, deflate (the zlib format) or br`,
  };
}

/**
 * The 400 `malformed_body` message for a body its Content-Encoding (`contentEncoding`, as the
 * request sent it, when known) does not decode. For `deflate` it says which format that is: HTTP's
 * deflate is the zlib format (RFC 1950, RFC 9110 §8.4.1.2), not the raw DEFLATE stream some
 * libraries write under that name (Go's compress/flate); the service does not guess between them.
 */
export function undecodableBodyMessage(contentEncoding: unknown): string {
  const base = 'the body could not be decoded with its Content-Encoding: send it uncompressed, or compressed as the header says';
  if (typeof contentEncoding !== 'string' || contentEncoding.trim().toLowerCase() !== 'deflate') return base;
  return `${base}; Content-Encoding deflate is the zlib format (RFC 1950, RFC 9110 §8.4.1.2), not raw DEFLATE: wrap it in zlib (in Go compress/zlib, not compress/flate), or send gzip`;
}

/** The limit body-parser's `entity.too.large` error carries (bytes), or undefined. */
function limitOf(err: unknown): number | undefined {
  const limit = (err as { limit?: unknown } | null)?.limit;
  return typeof limit === 'number' ? limit : undefined;
}

/** What a client does with a write whose outcome is unknown (the end of its 503 messages). */
const RESEND_UNCHANGED =
  'send the same request again unchanged (events with your own ids are then answered as the original, or written now; events without an id get new ids and would be written again)';

/**
 * The 503 message of a write whose store connection was lost after it was sent, its outcome
 * unknown ({@link WriteOutcomeUnknownError}, or a KurrentDB write the server did not answer):
 * unlike other rejections, it may have been written.
 */
export const WRITE_OUTCOME_UNKNOWN_MESSAGE = `the event store connection was lost after this write was sent and whether it was done is unknown: it may have been written; ${RESEND_UNCHANGED}`;

/**
 * The 503 message of a write whose outcome is unknown (`err.mayHaveBeenWritten`): when PostgreSQL did
 * not answer it within the client-side bound ({@link PostgresNoAnswerError}, a frozen server), naming
 * that bound, e.g. `PostgreSQL did not answer this write within 35000 ms (frozen, overloaded or cut
 * off), nor a check of it afterwards: it may have been written; send the same request again
 * unchanged (…)`; otherwise undefined ({@link WRITE_OUTCOME_UNKNOWN_MESSAGE}).
 */
export function writeOutcomeUnknownMessage(err: EventStoreUnavailableError): string | undefined {
  if (!(err.cause instanceof PostgresNoAnswerError)) return undefined;
  return `PostgreSQL did not answer this write within ${err.cause.withinMs} ms (frozen, overloaded or cut off), nor a check of it afterwards: it may have been written; ${RESEND_UNCHANGED}`;
}

/**
 * The 503 `store_unavailable` answer's body: `mayHaveBeenWritten` (see `error-codes.ts`) true for
 * a write sent whose outcome is unknown (resend it unchanged), false when nothing was written
 * (retry). `message` replaces the default one of a store that does not answer.
 */
export function storeUnavailable(mayHaveBeenWritten: boolean, message?: string): ApiErrorBody {
  return {
    code: 'store_unavailable',
    message: message ?? (mayHaveBeenWritten ? WRITE_OUTCOME_UNKNOWN_MESSAGE : 'the event store is unavailable; retry later'),
    mayHaveBeenWritten,
  };
}

/**
 * Seconds a client should wait before sending a request answered 503 `store_unavailable` again (`Retry-After`): clients
 * retrying at once spent their tenant's rate budget during a 10 s PostgreSQL outage and were refused 429 for a minute after
 * it (newcomer ncops67 F6).
 */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
/** The headers of every 503 `store_unavailable` answer. */
export const STORE_UNAVAILABLE_HEADERS: Readonly<Record<string, string>> = { 'retry-after': String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS) };

/** The `pg` driver's messages (and the store's, for a new connection's first statement) when no connection was had within the connect timeout. */
const POSTGRES_CONNECT_TIMEOUT =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout|no answer to a new connection's first statement/;

/**
 * The 503 message of an {@link EventStoreUnavailableError} that wrote nothing: the default one, with
 * the cause its driver error's SQLSTATE names when it names one ({@link postgresCauseOf}), e.g.
 * `the event store is unavailable: PostgreSQL has too many connections (SQLSTATE 53300); retry later`;
 * a store closed by the shutdown while the request waited for it ({@link EventStoreClosedError}) saying so;
 * a server that closed the connection before answering as PostgreSQL ({@link isClosedBeforePostgresAnswer}: another service) saying so;
 * PostgreSQL not answering a statement within the client-side bound ({@link PostgresNoAnswerError}) or giving no
 * connection within the connect timeout (10 s) saying so; a full disk's ({@link isSqliteDiskFull}: the event store's file, or the read models' while they
 * cannot be written, {@link ReadModelsFullError}) saying so; undefined (the default) otherwise. No
 * server detail beyond the cause's meaning (no path: `/health` names the file).
 */
export function storeUnavailableMessage(err: EventStoreUnavailableError): string | undefined {
  if (err instanceof EventStoreClosedError)
    return 'the event store is closed: the service is shutting down; nothing was written; retry on another replica or once it is back';
  if (err.cause instanceof PostgresNoAnswerError)
    return `the event store is unavailable: PostgreSQL did not answer within ${err.cause.withinMs} ms (frozen, overloaded or cut off); nothing was written; retry later`;
  // Closed while being opened, before any answer of PostgreSQL's: the address is another service, or a proxy without a backend (newcomer ncops65 F8).
  if (isClosedBeforePostgresAnswer(err.cause))
    return 'the event store is unavailable: the server DATABASE_URL names closed the connection before answering as PostgreSQL (another service, or a proxy without a PostgreSQL behind it; GET /health names the address); nothing was written; retry later';
  if (err.cause instanceof Error && POSTGRES_CONNECT_TIMEOUT.test(err.cause.message))
    return 'the event store is unavailable: PostgreSQL gave no connection within the 10 s connect timeout (down, frozen, overloaded or cut off); nothing was written; retry later';
  if (err instanceof ReadModelsFullError)
    return err.diskFull
      ? 'the read models cannot be written: their disk is full; nothing was written: retry once space is freed (GET /health names the file)'
      : "the read models cannot be written: their file's reads or writes fail (a file-size limit, a disk quota or a failing disk); nothing was written: retry once that is fixed (GET /health names the file and the error)";
  if (err instanceof ReadModelsOffLogWriteError)
    return "this replica's read models come from another log than the event store's (the store was restored from a backup, or replaced, while it ran): nothing was written; send the write to another replica; this one takes writes again once restarted on rebuilt read models (npm run rebuild-read-models, or delete read-models.sqlite; GET /health names the file)";
  if (isSqliteDiskFull(err.cause)) return 'the event store is unavailable: its disk is full; nothing was written: retry once space is freed';
  if (isSqliteWriteFailure(err.cause))
    return "the event store is unavailable: its file's reads or writes fail (a file-size limit, a disk quota or a failing disk; GET /health shows the error); retry once that is fixed";
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  const cause = (typeof code === 'string' ? postgresCauseOf(code) : null) ?? postgresConnectionCauseOf(err.cause);
  return cause === null ? undefined : `the event store is unavailable: ${cause}; retry later`;
}

/**
 * The 429 answer's body when the budget is not known (the throttler's guard, which counts no request
 * of today's routes): names whose budget it is (a tenant's, all its keys sharing it; without a known
 * key the client address's) and the variable that sets it. The check before the body answers
 * {@link rateLimitedBody} instead.
 */
export const RATE_LIMITED: ApiErrorBody = {
  code: 'rate_limited',
  message:
    "too many requests: this tenant's budget (shared by all its API keys; without a known key, this client address's) of RATE_LIMIT_PER_MINUTE requests per minute is spent: slow down, and retry after Retry-After seconds",
};

/**
 * The 429 answer's body of a spent budget: whose it is (`tenant`, the tenant of the request's
 * configured key, every key of a tenant sharing it; undefined: the client address's, for a request
 * without a known key or in open mode), the limit (`limitPerMinute`, requests per minute,
 * `RATE_LIMIT_PER_MINUTE`) and when to retry (`retryAfterSeconds`, whole seconds, as `Retry-After`).
 * The tenant named is the caller's own (from its key), never input.
 */
export function rateLimitedBody(tenant: string | undefined, limitPerMinute: number, retryAfterSeconds: number): ApiErrorBody {
  const whose =
    tenant === undefined
      ? "the budget of this client address (a request without a known API key spends its address's)"
      : `the budget of tenant ${tenant} (shared by all of the tenant's API keys)`;
  return {
    code: 'rate_limited',
    message: `too many requests: ${whose} of ${limitPerMinute} requests per minute (RATE_LIMIT_PER_MINUTE) is spent: slow down, and retry after ${retryAfterSeconds} seconds (Retry-After)`,
  };
}

/** The 404 answer's body to a path no route has (or a file the audit page's file server refuses). */
export const ROUTE_NOT_FOUND: ApiErrorBody = { code: 'route_not_found', message: 'no such route; see /docs for the API' };

/**
 * Maps an error to (status, body, headers): `headers` (lower-case names) only when the answer has
 * some of its own, `Retry-After` (whole seconds) on 503 `counting_timeout` and `store_unavailable`, as on 429 and 503
 * `shutting_down`. Exported for tests.
 */
export function toApiError(err: unknown, path?: string): { status: number; body: ApiErrorBody; headers?: Record<string, string> } {
  if (err instanceof CountingTimeoutError) {
    return {
      status: statusOfCode(err.code),
      body: { code: err.code, message: err.message, ...(err.details ?? {}) },
      headers: { 'retry-after': String(err.retryAfterSeconds) },
    };
  }
  if (err instanceof SessionError && isApiErrorCode(err.code)) {
    return { status: statusOfCode(err.code), body: { code: err.code, message: err.message, ...(err.details ?? {}) } };
  }
  if (err instanceof InvalidParameterError) {
    return { status: 400, body: { code: 'invalid_parameter', message: err.message, parameter: err.parameter } };
  }
  if (err instanceof EventStoreReplacedError)
    return {
      status: 503,
      body: {
        code: 'store_corrupt',
        message:
          "the event store's file was replaced or removed while the service ran: nothing was written, and nothing will be until the service is restarted (it then opens the file now at its path" +
          // Their names without the directory, as the answer never names the store's path (newcomer ncverify70).
          (err.setAside.length > 0
            ? `; the replaced file's ${err.setAside.map((name) => name.slice(name.lastIndexOf('/') + 1)).join(' and ')} were set aside for it`
            : '') +
          '; to restore a backup, stop the service first; GET /health names the file)',
      },
    };
  if (err instanceof EventStoreCorruptError)
    return {
      status: 503,
      body: {
        code: 'store_corrupt',
        message:
          "the event store's file is damaged: nothing was written, and nothing will be until an operator restores it from a backup and restarts the service (GET /health names the file)",
      },
    };
  // The store wraps its own SQLite errors: a raw one saying a file is damaged comes from the read models (the one rule).
  if (err instanceof ReadModelsReplacedError)
    return {
      status: 503,
      body: {
        code: 'read_models_damaged',
        message: `the read models file (read-models.sqlite) was rewritten by another build of the service (version ${err.versionOnDisk}, this build's is ${READ_MODEL_SCHEMA_VERSION}): another service process uses its DATA_DIR; stop it, then restart this service, which rebuilds the read models from the log; nothing was lost`,
      },
    };
  if (err instanceof ReadModelsAlteredError)
    return {
      status: 503,
      body: {
        code: 'read_models_damaged',
        message:
          "the read models file (read-models.sqlite) lacks a table or column of this build's read models: another program changed it; restart the service, which rebuilds the read models from the log; nothing was lost",
      },
    };
  if (isReadModelsDamage(err))
    return {
      status: 503,
      body: {
        code: 'read_models_damaged',
        message:
          'the read models file (read-models.sqlite) is damaged: restart the service, which moves it aside and rebuilds it from the log; nothing was lost',
      },
    };
  if (err instanceof EventStoreUnavailableError)
    return {
      status: 503,
      body: storeUnavailable(err.mayHaveBeenWritten, err.mayHaveBeenWritten ? writeOutcomeUnknownMessage(err) : storeUnavailableMessage(err)),
      headers: STORE_UNAVAILABLE_HEADERS,
    };
  const bodyParserType = (err as { type?: string } | null)?.type;
  if (bodyParserType === 'entity.too.large') return { status: 413, body: payloadTooLarge(limitOf(err), path) };
  if (bodyParserType === 'entity.verify.failed' && err instanceof BodyTooDeepError)
    return { status: 400, body: { code: 'malformed_json', message: err.message } };
  if (bodyParserType === 'entity.verify.failed')
    return { status: 400, body: { code: 'malformed_body', message: 'the body is not valid UTF-8: send JSON encoded as UTF-8' } };
  if (bodyParserType === 'entity.parse.failed')
    return { status: 400, body: { code: 'malformed_json', message: err instanceof MalformedJsonError ? err.message : 'request body is not valid JSON' } };
  if (bodyParserType === 'encoding.unsupported') return { status: 415, body: unsupportedContentEncoding((err as { encoding?: unknown }).encoding) };
  // The connection ended before the whole body arrived (the client went away, or REQUEST_TIMEOUT_MS closed it
  // after a 408): nobody reads this answer, but it is the client's doing, not an internal error to log.
  if (bodyParserType === 'request.aborted')
    return { status: 400, body: { code: 'request_aborted', message: 'the connection closed before the whole body arrived; nothing was written' } };
  if (bodyParserType === 'charset.unsupported')
    return { status: 415, body: { code: 'unsupported_encoding', message: 'unsupported charset: send the body as UTF-8 JSON' } };
  const zlibCode = (err as { code?: unknown } | null)?.code;
  if (typeof zlibCode === 'string' && /^(Z_|ERR__ERROR)/.test(zlibCode))
    return { status: 400, body: { code: 'malformed_body', message: undecodableBodyMessage((err as { contentEncoding?: unknown }).contentEncoding) } };
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const cause = err.cause as { type?: string } | undefined;
    if (cause?.type) return toApiError(cause, path);
    if (status === 404) return { status, body: { ...ROUTE_NOT_FOUND } };
    if (status === 429) return { status, body: { ...RATE_LIMITED } };
    if (status === 415) return { status, body: { code: 'unsupported_media_type', message: `send the body as JSON with ${JSON_CONTENT_TYPE_RULE}` } };
    if (status === 413) return { status, body: payloadTooLarge(undefined, path) };
    if (status === 400 && /JSON/i.test(err.message)) return { status, body: { code: 'malformed_json', message: 'request body is not valid JSON' } };
    if (status === 400 && /^Failed to decode param/.test(err.message))
      return { status, body: { code: 'invalid_path', message: 'the URL path is not valid percent-encoded UTF-8' } };
    if (status === 401) return { status, body: { code: 'unauthorized', message: err.message } };
    // Any other HttpException is none the service throws: an unexpected error, answered with a declared code.
    return { status: 500, body: { code: 'internal', message: 'internal error; the request may be retried' } };
  }
  // The audit page's file server refuses paths that leave its directory (`/ui/../..`) with a 403
  // http-error: answered as any missing file, so nothing about the file system shows.
  const fileStatus = (err as { status?: unknown } | null)?.status;
  if ((fileStatus === 403 || fileStatus === 404) && bodyParserType === undefined) return { status: 404, body: { ...ROUTE_NOT_FOUND } };
  return { status: 500, body: { code: 'internal', message: 'internal error; the request may be retried' } };
}

/**
 * Global exception filter: every error becomes `{ code, message }` via {@link toApiError}; every
 * one is also reported to {@link ReadModelsDamage} (`/health` shows the read models' damage, the
 * `read_models_damaged` answers).
 */
@Catch()
export class ApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');
  /**
   * The request lines of 503 answers (the store unavailable, the read models behind, a counting
   * timeout: clients retry them) at warn, at most 10 per minute (`LINES_PER_WINDOW`); the others at
   * debug, counted by code and told in one warn line a minute (a full disk's retrying clients wrote
   * 833 warn lines in 40 s, the cause having its own line; newcomer ncdiskfull F4).
   */
  private readonly unavailableLines = new RateLimitedWarnings(this.logger, 'requests answered 503 (their lines at debug)');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly damage: ReadModelsDamage,
  ) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const http = this.adapterHost.httpAdapter;
    const res: unknown = host.switchToHttp().getResponse();
    // The request's URL: a 413's advice depends on what the route's body holds (tooLargeAdvice).
    // Read models another build rewrote under this one answer as their damage (ReadModelsDamage.classify).
    const error = this.damage.classify(err);
    const { status, body, headers } = toApiError(error, host.switchToHttp().getRequest<{ url?: string } | undefined>()?.url);
    this.damage.report(error, 'a read');
    if (status >= 500 && status !== 503) this.logger.error(`unhandled ${(error as Error)?.name ?? 'error'}: ${(error as Error)?.stack ?? String(error)}`);
    // The raw Node response (Fastify's reply holds it), where pino-http looks for the mark.
    if (status === 503) markExpectedAnswer((res as { raw?: object }).raw ?? (res as object), this.unavailableLines.admit(body.code) ? 'warn' : 'debug');
    if (http.isHeadersSent(res)) return;
    for (const [name, value] of Object.entries(headers ?? {})) http.setHeader(res, name, value);
    http.reply(res, body, status);
  }
}
