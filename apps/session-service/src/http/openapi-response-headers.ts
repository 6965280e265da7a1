/**
 * The response headers every answer carries, declared in the OpenAPI document (newcomer ncpolyglot
 * A1: a client generated from the document could not read them): `X-Request-Id` on every answer of
 * every operation (the request's id, see `observability/request-id.ts`), and on the `/v1`
 * operations the rate limit's `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
 * (`RATE_LIMIT_PER_MINUTE`, see `auth/key-check-before-body.ts`; absent when it is 0), the
 * browser-hardening headers of every answer (`security-headers.ts`: `Content-Security-Policy`,
 * `X-Frame-Options`, `X-Content-Type-Options`, `Referrer-Policy`, `Cross-Origin-Opener-Policy`,
 * `Cross-Origin-Resource-Policy`, `Origin-Agent-Cluster`), and `Cache-Control` on the `/v1` and
 * `/health` operations (`no-store`, `no-store.ts`). Declared once under `components.headers` and
 * referenced from each response.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { MAX_REQUEST_ID_LENGTH } from '../observability/request-id';

/** The header objects, by name, as `components.headers` holds them. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: `the request's id: the client's X-Request-Id when it is usable (1 to ${MAX_REQUEST_ID_LENGTH} printable ASCII characters, no spaces), else one the service made (a UUID: a read's unusable id is replaced, a write with one is refused, 400 validation_failed, parameter X-Request-Id); the request log line and the history's requestedBy.requestId name the request by it`,
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_REQUEST_ID_LENGTH },
  },
  'X-RateLimit-Limit': {
    description:
      "requests per minute of this request's budget (RATE_LIMIT_PER_MINUTE, one budget per tenant or, without a key, per client address); absent when the rate limit is off (0)",
    required: false,
    schema: { type: 'integer', minimum: 1 },
  },
  'X-RateLimit-Remaining': {
    description: 'requests left in the budget this window (0 on a 429); absent when the rate limit is off',
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description:
      "seconds from now (rounded up) until the budget's window ends, or on a 429 until the block ends: a number of seconds, not a clock time; absent when the rate limit is off",
    required: false,
    schema: { type: 'integer', minimum: 0 },
  },
  'Content-Security-Policy': {
    description: "the browser-hardening policy (default-src 'none', script-src 'self', frame-ancestors 'none', …): only matters if a browser opens the answer",
    required: false,
    schema: { type: 'string' },
  },
  'X-Frame-Options': { description: 'DENY: no page may frame the answer', required: false, schema: { type: 'string', enum: ['DENY'] } },
  'X-Content-Type-Options': { description: 'nosniff: browsers take the Content-Type as sent', required: false, schema: { type: 'string', enum: ['nosniff'] } },
  'Referrer-Policy': { description: 'no-referrer', required: false, schema: { type: 'string', enum: ['no-referrer'] } },
  'Cross-Origin-Opener-Policy': { description: 'same-origin', required: false, schema: { type: 'string', enum: ['same-origin'] } },
  'Cross-Origin-Resource-Policy': { description: 'same-origin', required: false, schema: { type: 'string', enum: ['same-origin'] } },
  'Origin-Agent-Cluster': { description: '?1', required: false, schema: { type: 'string', enum: ['?1'] } },
  'Cache-Control': {
    description: 'no-store: answers of /v1 and /health hold conversation text or live state, no cache may keep them',
    required: false,
    schema: { type: 'string', enum: ['no-store'] },
  },
};

/** The headers declared on answers of every operation, those only of the `/v1` (rate-limited) operations, and those of `/v1` and `/health`. */
const EVERY_ANSWER = [
  'X-Request-Id',
  'Content-Security-Policy',
  'X-Frame-Options',
  'X-Content-Type-Options',
  'Referrer-Policy',
  'Cross-Origin-Opener-Policy',
  'Cross-Origin-Resource-Policy',
  'Origin-Agent-Cluster',
] as const;
const RATE_LIMITED = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;
const NOT_STORED = ['Cache-Control'] as const;

/**
 * `document` with {@link RESPONSE_HEADERS} in `components.headers` and referenced from every
 * response of every operation (the rate-limit headers from those of paths under `/v1/`), next to
 * the headers a response declares already (`Retry-After`). Changes `document` in place and returns it.
 */
export function withResponseHeaders(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RESPONSE_HEADERS } };
  for (const [path, item] of Object.entries(document.paths)) {
    const names: string[] = [...EVERY_ANSWER];
    if (path.startsWith('/v1/')) names.push(...RATE_LIMITED);
    if (path.startsWith('/v1/') || path === '/health' || path.startsWith('/health/')) names.push(...NOT_STORED);
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>)) {
      if (operation === null || typeof operation !== 'object' || !operation.responses) continue;
      for (const response of Object.values(operation.responses)) {
        response.headers = { ...response.headers, ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])) };
      }
    }
  }
  return document;
}
