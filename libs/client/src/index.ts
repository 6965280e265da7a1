/**
 * Typed HTTP client of the session service: `openapi-fetch` over the types generated from the
 * service's OpenAPI document (`openapi-types.ts`, regenerate with `npm run client:generate`).
 * Every call returns `{ data, error, response }`: `data` typed by the route's 2xx schema, `error`
 * by its `{ code, message }` error schema. Query parameters are written by {@link serializeQuery}:
 * a time (`from`, `to`, `updatedSince`, `updatedBefore`) may be a `Date`, sent as ISO-8601 UTC.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './openapi-types';
import { serializeQuery, type TimeQueryParameter } from './query-serializer';

export type { components, paths, operations } from './openapi-types';
export { queryParameterText, serializeQuery, TIME_QUERY_PARAMETERS, type TimeQueryParameter } from './query-serializer';

/** The API's named schemas (`Schemas['SessionSummary']`, `Schemas['CompactionDiff']`, …). */
export type Schemas = components['schemas'];

/** A query's parameters with each time parameter ({@link TimeQueryParameter}) also accepting a `Date`. */
type DatedQuery<Q> = { [K in keyof Q]: K extends TimeQueryParameter ? Q[K] | Date : Q[K] };
/** An operation whose `parameters.query` is a {@link DatedQuery} (optional members stay optional). */
type DatedOperation<O> = { [K in keyof O]: K extends 'parameters' ? { [P in keyof O[K]]: P extends 'query' ? DatedQuery<O[K][P]> : O[K][P] } : O[K] };

/**
 * The API's {@link paths} as the client takes them: the generated types, except that a time
 * query parameter (`from`, `to`, `updatedSince`, `updatedBefore`) is `string | Date` (a `Date` is sent as
 * ISO-8601 UTC, `toISOString()`).
 */
export type ClientPaths = { [P in keyof paths]: { [M in keyof paths[P]]: DatedOperation<paths[P][M]> } };

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
 * given): a `Date` as ISO-8601 UTC, numbers and booleans as text, `undefined`/`null` left out;
 * an array, an object or an invalid `Date` throws a TypeError before anything is sent.
 * @example
 * const client = createSessionServiceClient('http://localhost:3000', { apiKey: process.env.API_KEY });
 * const { data, error } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's1' } } });
 */
export function createSessionServiceClient(baseUrl: string, options: SessionServiceClientOptions = {}): SessionServiceClient {
  const { apiKey, headers, querySerializer = serializeQuery, ...rest } = options;
  return createClient<ClientPaths>({ ...rest, querySerializer, baseUrl: baseUrl.replace(/\/+$/, ''), headers: clientHeaders(headers, apiKey) });
}
