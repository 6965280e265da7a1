/**
 * Where the `openai` client sends a model call, from the endpoint URL configured
 * (`OPENAI_BASE_URL`): the client appends the route (`/chat/completions`) to its `baseURL` as text,
 * so a query in that URL (Azure OpenAI's `?api-version=2024-10-21`) would end up inside the path
 * (`/v1?api-version=2024-10-21%2Fchat%2Fcompletions`, a 404). The query goes to the client's
 * `defaultQuery` instead, sent on every request after the route
 * (`/v1/chat/completions?api-version=2024-10-21`).
 */

/** The `openai` client's `baseURL` and `defaultQuery` of an endpoint URL (see {@link modelEndpointOf}). */
export interface ModelEndpoint {
  /** The URL without its query: scheme, credentials, host, port and path (e.g. `http://host/v1`). */
  baseURL: string;
  /** The URL's query parameters, decoded (e.g. `{ 'api-version': '2024-10-21' }`); absent when it has none. */
  defaultQuery?: Record<string, string>;
}

/**
 * What {@link modelEndpointOf} refuses in an endpoint URL: `fragment`, a `#…` part; `repeated-parameter`,
 * a query parameter named twice. A RangeError whose message says what is wrong (without the URL).
 */
export class ModelEndpointUrlError extends RangeError {
  override readonly name = 'ModelEndpointUrlError';
  constructor(
    readonly fault: 'fragment' | 'repeated-parameter',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Splits the absolute URL `url` into the client's {@link ModelEndpoint}: its query (after `?`) as
 * `defaultQuery`, the text before the `?` as `baseURL` (`url` itself when it has no `?`). Pure.
 * @throws TypeError when `url` is not an absolute URL (`new URL`'s); {@link ModelEndpointUrlError} (a RangeError) when it has
 *   a fragment (`#…`: never sent to a server, so it cannot be what the endpoint needs; fault `fragment`), or names a query
 *   parameter twice (the client sends one value per parameter; fault `repeated-parameter`). The message does not quote the
 *   URL (it may hold a key).
 */
export function modelEndpointOf(url: string): ModelEndpoint {
  const parsed = new URL(url);
  if (url.includes('#')) throw new ModelEndpointUrlError('fragment', 'it has a fragment (#…), which is never sent to the endpoint');
  const names = [...parsed.searchParams.keys()];
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined)
    throw new ModelEndpointUrlError('repeated-parameter', `its query names the parameter "${twice}" twice (one value per parameter is sent)`);
  const query = url.indexOf('?');
  if (query === -1) return { baseURL: url };
  const baseURL = url.slice(0, query);
  return names.length === 0 ? { baseURL } : { baseURL, defaultQuery: Object.fromEntries(parsed.searchParams) };
}
