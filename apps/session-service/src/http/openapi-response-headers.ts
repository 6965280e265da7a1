/**
 * The response headers every answer carries, declared in the OpenAPI document (newcomer ncpolyglot
 * A1: a client generated from the document could not read them): `X-Request-Id` on every answer of
 * every operation (the request's id, see `observability/request-id.ts`), and on the `/v1`
 * operations the rate limit's `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
 * (`RATE_LIMIT_PER_MINUTE`, see `auth/key-check-before-body.ts`; absent when it is 0). Declared once
 * under `components.headers` and referenced from each response.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { MAX_REQUEST_ID_LENGTH } from '../observability/request-id';

/** The header objects, by name, as `components.headers` holds them. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description: `the request's id: the client's X-Request-Id when it is usable (1 to ${MAX_REQUEST_ID_LENGTH} printable ASCII characters, no spaces), else one the service made (a UUID); the request log line and the history's requestedBy.requestId name the request by it`,
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
} as const;

/** The headers declared on answers of every operation, and those only of the `/v1` (rate-limited) operations. */
const EVERY_ANSWER = ['X-Request-Id'] as const;
const RATE_LIMITED = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

/**
 * `document` with {@link RESPONSE_HEADERS} in `components.headers` and referenced from every
 * response of every operation (the rate-limit headers from those of paths under `/v1/`), next to
 * the headers a response declares already (`Retry-After`). Changes `document` in place and returns it.
 */
export function withResponseHeaders(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RESPONSE_HEADERS } };
  for (const [path, item] of Object.entries(document.paths)) {
    const names = path.startsWith('/v1/') ? [...EVERY_ANSWER, ...RATE_LIMITED] : [...EVERY_ANSWER];
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>)) {
      if (operation === null || typeof operation !== 'object' || !operation.responses) continue;
      for (const response of Object.values(operation.responses)) {
        response.headers = { ...response.headers, ...Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }])) };
      }
    }
  }
  return document;
}
