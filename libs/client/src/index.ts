/**
 * Typed HTTP client of the session service: `openapi-fetch` over the types generated from the
 * service's OpenAPI document (`openapi-types.ts`, regenerate with `npm run client:generate`).
 * Every call returns `{ data, error, response }`: `data` typed by the route's 2xx schema, `error`
 * by its `{ code, message }` error schema.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './openapi-types';

export type { components, paths, operations } from './openapi-types';

/** The API's named schemas (`Schemas['SessionSummary']`, `Schemas['CompactionDiff']`, …). */
export type Schemas = components['schemas'];

/** A client bound to one service URL. */
export type SessionServiceClient = Client<paths>;

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
 * @example
 * const client = createSessionServiceClient('http://localhost:3000', { apiKey: process.env.API_KEY });
 * const { data, error } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's1' } } });
 */
export function createSessionServiceClient(baseUrl: string, options: SessionServiceClientOptions = {}): SessionServiceClient {
  const { apiKey, headers, ...rest } = options;
  return createClient<paths>({ ...rest, baseUrl: baseUrl.replace(/\/+$/, ''), headers: clientHeaders(headers, apiKey) });
}
