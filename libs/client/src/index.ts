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

/** Options of {@link createSessionServiceClient}. */
export interface SessionServiceClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Sent as `Authorization: Bearer <apiKey>` (needed when the service has API_KEYS). */
  apiKey?: string;
}

/**
 * A client for the service at `baseUrl` (e.g. `http://localhost:3000`).
 * @example
 * const client = createSessionServiceClient('http://localhost:3000', { apiKey });
 * const { data, error } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's1' } } });
 */
export function createSessionServiceClient(baseUrl: string, options: SessionServiceClientOptions = {}): SessionServiceClient {
  const { apiKey, headers, ...rest } = options;
  return createClient<paths>({
    ...rest,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(headers as Record<string, string> | undefined), ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
  });
}
