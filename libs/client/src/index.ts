/**
 * Typed HTTP client of the session service: `openapi-fetch` over the types generated from the
 * service's OpenAPI document (`openapi-types.ts`, regenerate with `npm run client:generate`).
 * Every call that gets an HTTP answer resolves to `{ data, error, response }`: `data` typed by the
 * route's 2xx schema, `error` by its `{ code, message }` error schema. A call that gets no answer
 * rejects: fetch's `TypeError` (`fetch failed`, its `cause` e.g. `ECONNREFUSED`, `ECONNRESET`,
 * `ENOTFOUND`; `terminated`, cause `UND_ERR_SOCKET`, when the connection breaks while the answer's
 * body arrives), or the `AbortSignal`'s reason. Query parameters are written by
 * {@link serializeQuery}: a time (`from`, `to`, `updatedSince`, `updatedBefore`, `atTime`) may be a
 * `Date`, sent as ISO-8601 UTC; an optional one may be `undefined` or `null` (left out). An optional
 * request body field, at any depth, may be `undefined` (sent absent, {@link ClientPaths}). A path
 * parameter is sent as one path segment or refused before sending ({@link pathParameterText}).
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './openapi-types';
import { serializeBody } from './body-serializer';
import { hasLoneSurrogate, LONE_SURROGATE_REFUSAL, serializeQuery, type TimeQueryParameter } from './query-serializer';

export type { components, paths, operations } from './openapi-types';
export { queryParameterText, serializeQuery, TIME_QUERY_PARAMETERS, type TimeQueryParameter } from './query-serializer';
export { unsendableValueAt, serializeBody, type UnsendableValue } from './body-serializer';
/**
 * openapi-fetch's types a consumer may name, re-exported so that it need not depend on
 * openapi-fetch itself (a transitive dependency, not importable under pnpm's strict layout):
 * `Middleware` for `client.use(…)`, `FetchResponse` for a call's `{ data, error, response }`.
 */
export type { FetchResponse, Middleware, MiddlewareCallbackParams } from 'openapi-fetch';

/** The API's named schemas (`Schemas['SessionSummary']`, `Schemas['CompactionDiff']`, …). */
export type Schemas = components['schemas'];

/** The window as `format=events` (the default) answers it: the active window's events in the native shape, `events`. */
export type EventsWindow = Extract<Schemas['Window'], { events: unknown }>;
/** The window as `format=openai` answers it: the active window as OpenAI chat messages, `messages`. */
export type OpenAiWindow = Extract<Schemas['Window'], { messages: unknown }>;

/**
 * Whether a window answer is in the OpenAI format (`format=openai`): narrows `data` to
 * {@link OpenAiWindow} (else it is an {@link EventsWindow}). The answer's type does not follow the
 * `format` query parameter, so narrow it with this (or `'messages' in data`) before reading
 * `messages` or `events`.
 * @example
 * const { data } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format: 'openai' } } });
 * if (data && isOpenAiWindow(data)) send(data.messages);
 */
export function isOpenAiWindow(window: Schemas['Window']): window is OpenAiWindow {
  return 'messages' in window;
}

/**
 * One native event as `POST /v1/sessions/{sessionId}/events` takes it (an item of its body's
 * `events`, as {@link ClientPaths} types it: an optional field also takes `undefined`).
 */
export type NativeEventInput = ClientPaths['/v1/sessions/{sessionId}/events']['post']['requestBody']['content']['application/json']['events'][number];
/** One hit of a recall page (an item of `GET /v1/recall`'s `items`). */
export type RecallHit = Schemas['RecallPage']['items'][number];
/** One event of a session's full log (an item of `GET /v1/sessions/{sessionId}/events`' `events`): conversation events and decision events. */
export type LogEvent = Schemas['LogPage']['events'][number];

/**
 * A query's parameters as the client takes them: each time parameter ({@link TimeQueryParameter})
 * also accepts a `Date`, and each optional parameter also `undefined` or `null` given explicitly
 * (`{ userId: maybeUser }`, `{ cursor: null }`: {@link serializeQuery} leaves them out), also
 * under `exactOptionalPropertyTypes`. Required parameters (recall's `q`) take their value only.
 */
type ClientQuery<Q> = {
  [K in keyof Q]: (K extends TimeQueryParameter ? Q[K] | Date : Q[K]) | (object extends Pick<Q, K> ? undefined | null : never);
};
/**
 * A request body as the client takes it: the generated type, except that each optional member, at
 * every depth (nested objects, array items, each member of a union), also takes `undefined` given
 * explicitly (`{ dryRun: maybeFlag }`, an event's `createdAt: maybeDate`), also under
 * `exactOptionalPropertyTypes`. `JSON.stringify` (openapi-fetch's body serializer) leaves such a
 * member out, so it is sent absent. Required members take their value only; `null` only where the
 * generated type has it (not `expectedRevision`, for which the service refuses `null`).
 */
type ClientBody<T> = T extends readonly unknown[]
  ? { [I in keyof T]: ClientBody<T[I]> }
  : T extends object
    ? { [K in keyof T]: ClientBody<T[K]> | (object extends Pick<T, K> ? undefined : never) }
    : T;
/**
 * An operation whose `parameters.query` is a {@link ClientQuery} and whose `requestBody` is a
 * {@link ClientBody} (optional members stay optional; `responses` unchanged).
 */
type ClientOperation<O> = {
  [K in keyof O]: K extends 'parameters'
    ? { [P in keyof O[K]]: P extends 'query' ? ClientQuery<O[K][P]> : O[K][P] }
    : K extends 'requestBody'
      ? ClientBody<O[K]>
      : O[K];
};

/**
 * The API's {@link paths} as the client takes them: the generated types, except that a time
 * query parameter (`from`, `to`, `updatedSince`, `updatedBefore`, `atTime`) is `string | Date` (a
 * `Date` is sent as ISO-8601 UTC, `toISOString()`), an optional query parameter also takes
 * `undefined` or `null`, which leave it out, and an optional request body member (at any depth)
 * also takes `undefined`, which leaves it out ({@link ClientBody}). Answers keep the generated types.
 */
export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: ClientOperation<paths[P][M]> } };

/** A client bound to one service URL. */
export type SessionServiceClient = Client<ClientPaths>;

/** Options of {@link createSessionServiceClient}: openapi-fetch's options but `baseUrl`, and the API key. */
export interface SessionServiceClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /**
   * Sent as `Authorization: Bearer <apiKey>` (needed when the service has API_KEYS). Undefined or
   * empty sends no key, so `process.env.API_KEY` can be passed as it is.
   */
  apiKey?: string | undefined;
}

/**
 * The headers every request of a client sends: `headers` in any `HeadersInit` form (a plain
 * object, a `Headers` instance or `[name, value]` pairs; names case-insensitive), plus
 * `Authorization: Bearer <apiKey>` when `apiKey` is not empty (replacing one given in `headers`).
 * A plain object's `undefined` or `null` values are left out (openapi-fetch's own convention).
 */
export function clientHeaders(headers: ClientOptions['headers'], apiKey?: string): Headers {
  const merged = new Headers();
  if (headers instanceof Headers || Array.isArray(headers)) new Headers(headers).forEach((value, name) => merged.append(name, value));
  else
    for (const [name, value] of Object.entries(headers ?? {}))
      if (value !== undefined && value !== null) for (const one of Array.isArray(value) ? value : [value]) merged.append(name, String(one));
  if (apiKey) merged.set('authorization', `Bearer ${apiKey}`);
  return merged;
}

/**
 * A client for the service at `baseUrl` (e.g. `http://localhost:3000`; trailing slashes are
 * ignored). `options.headers` is sent with every request in any form ({@link clientHeaders}).
 * Query parameters are written by {@link serializeQuery} (unless `options.querySerializer` is
 * given): a `Date` as ISO-8601 UTC, numbers and booleans as text, `undefined`/`null` left out
 * (the types accept them for every optional parameter); an array, an object or an invalid `Date`
 * throws a TypeError before anything is sent. A call resolves to `{ data, error, response }` for
 * every HTTP answer (`error` for a 4xx or 5xx, e.g. 503 `shutting_down`) and rejects when no
 * answer comes: fetch's `TypeError: fetch failed` with its `cause` (`ECONNREFUSED`,
 * `ECONNRESET`, `ENOTFOUND`, …) when the connection cannot be made or breaks, `TypeError:
 * terminated` (cause `UND_ERR_SOCKET`) when it breaks while the answer's body arrives, or an
 * abort's reason. An optional request body field given `undefined` is left out ({@link ClientPaths});
 * a value of a body that JSON would not carry as given (a number that is not finite, an invalid
 * `Date` or an array item that is `undefined`, which would arrive as null; an object that contains
 * itself) throws a TypeError naming it ({@link serializeBody}; unless `options.bodySerializer` is given).
 * A path parameter that is missing, empty, `.` or `..` (which the URL would not carry as one
 * segment: `/v1/sessions/./window` is `/v1/sessions/window`) throws a TypeError naming it before
 * anything is sent, for every method and route ({@link pathParameterText}).
 * @example
 * const client = createSessionServiceClient('http://localhost:3000', { apiKey: process.env.API_KEY });
 * const { data, error } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's1' } } });
 */
export function createSessionServiceClient(baseUrl: string, options: SessionServiceClientOptions = {}): SessionServiceClient {
  const { apiKey, headers, querySerializer = serializeQuery, bodySerializer = serializeBody, ...rest } = options;
  const client = createClient<ClientPaths>({
    ...rest,
    querySerializer,
    bodySerializer,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: clientHeaders(headers, apiKey),
  });
  // Every call checks its path parameters before anything is sent ({@link checkPathParameters}): a refusal rejects it.
  type Init = { params?: { path?: unknown } } | undefined;
  const checkedSend = (path: string, init: Init, send: () => Promise<unknown>): Promise<unknown> => {
    try {
      checkPathParameters(path, init?.params?.path);
    } catch (err) {
      return Promise.reject(err);
    }
    return send();
  };
  const methodNames = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;
  const methods = client as unknown as Record<(typeof methodNames)[number], (path: string, init?: Init) => Promise<unknown>>;
  for (const method of methodNames) {
    const send = methods[method];
    methods[method] = (path, init) => checkedSend(path, init, () => send(path, init));
  }
  const request = client.request as unknown as (method: string, path: string, init?: Init) => Promise<unknown>;
  client.request = ((method: string, path: string, init?: Init) =>
    checkedSend(path, init, () => request(method, path, init))) as SessionServiceClient['request'];
  const get = client.GET;
  // A text answer is read as text unless the call says how ({@link TEXT_ANSWER_PATHS}); openapi-fetch reads every answer as JSON.
  client.GET = ((path: string, init?: { parseAs?: string }) =>
    (get as (path: string, init?: object) => unknown)(
      path,
      (TEXT_ANSWER_PATHS as readonly string[]).includes(path) && init?.parseAs === undefined ? { ...init, parseAs: 'text' } : init,
    )) as SessionServiceClient['GET'];
  return client;
}

/**
 * The text a path parameter's value is sent as (percent-encoded by openapi-fetch,
 * `encodeURIComponent`: `/` as `%2F`, `%` as `%25`, a space as `%20`, other Unicode as its UTF-8
 * bytes), so that the service reads it back as the same id in one path segment: a string as it is,
 * a number, bigint or boolean as `String(value)`. @throws TypeError naming the parameter, with what
 * to fix, for a value the URL would not carry so (newcomer ncapi66 F3): missing (`undefined`,
 * `null`), empty (`/v1/sessions//window` is no route), `.` or `..` (the URL parser resolves such a
 * segment away: `/v1/sessions/./window` is `/v1/sessions/window`, session "window"'s summary; the
 * service refuses them as ids, docs/http-api.md "Session ids"), text with a lone UTF-16 surrogate (not
 * Unicode, no UTF-8 bytes), and any other value (an array or object would be sent joined by commas).
 */
export function pathParameterText(name: string, value: unknown): string {
  const refuse = (why: string) => new TypeError(`path parameter "${name}": ${why}`);
  if (value === undefined || value === null) throw refuse(`is ${String(value)}; pass the id (a session id, a compaction id, …) of the path`);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') {
    const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
    throw refuse(`${kind} cannot be sent; pass one id as a string`);
  }
  if (value === '')
    throw refuse(
      'is empty: the path would have an empty segment (//) and reach no route; pass the id (a session id is 1 to 128 characters, docs/http-api.md "Session ids")',
    );
  if (value === '.' || value === '..')
    throw refuse(
      `"${value}" cannot be sent: URLs resolve a "${value}" path segment away (/v1/sessions/${value}/window would be read as ${value === '.' ? '/v1/sessions/window' : '/v1/window'}, another route or session), and the service refuses "." and ".." as session ids (docs/http-api.md "Session ids"); use another id`,
    );
  if (hasLoneSurrogate(value)) throw refuse(LONE_SURROGATE_REFUSAL);
  return value;
}

/**
 * Checks the value of every path parameter `path` names (`{sessionId}`, `{compactionId}`) in
 * `pathParams` with {@link pathParameterText}; the client does so for every call of every method
 * before anything is sent (a refusal rejects the call). @throws TypeError naming the parameter.
 */
export function checkPathParameters(path: string, pathParams: unknown): void {
  const given = pathParams !== null && typeof pathParams === 'object' ? (pathParams as Record<string, unknown>) : {};
  // openapi-fetch's template forms: {name}, and {name*}, {.name}, {;name} (none in this API)
  for (const [placeholder] of path.matchAll(/\{[^{}]+\}/g)) {
    const key = placeholder.slice(1, -1).replace(/^[.;]|\*$/g, '');
    pathParameterText(key, Object.prototype.hasOwnProperty.call(given, key) ? given[key] : undefined);
  }
}

/** The paths whose 200 answer to GET is text (`text/plain` in the generated types), not JSON. */
type TextAnswerPath = { [P in keyof paths]: paths[P] extends { get: { responses: { 200: { content: { 'text/plain': string } } } } } ? P : never }[keyof paths];

/**
 * The paths whose answer the client's `GET` reads as text (`data` is the string the generated
 * types promise: `/metrics`' Prometheus text) unless the call gives its own `parseAs`; openapi-fetch
 * reads every other answer as JSON (newcomer ncfleet54: `client.GET('/metrics')` threw a
 * SyntaxError). The compiler checks the list holds every text path of the generated types.
 */
export const TEXT_ANSWER_PATHS: readonly TextAnswerPath[] = ['/metrics'];
/** Fails to compile when a text path of the generated types is missing from {@link TEXT_ANSWER_PATHS}. */
export type TextAnswerPathsListed = [Exclude<TextAnswerPath, '/metrics'>] extends [never] ? true : never;
const textAnswerPathsListed: TextAnswerPathsListed = true;
void textAnswerPathsListed;
