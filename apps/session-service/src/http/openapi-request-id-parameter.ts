/**
 * The `X-Request-Id` request header, declared in the OpenAPI document as an optional header
 * parameter of every operation (the service takes a client's id on every route and answers it in
 * the `X-Request-Id` response header, `openapi-response-headers.ts`; the document did not say so,
 * so a client generated from it had no typed way to send one). Its schema is the rule
 * `observability/request-id.ts` applies (1 to {@link MAX_REQUEST_ID_LENGTH} printable ASCII
 * characters without spaces: {@link REQUEST_ID_CHARACTERS}); what an id outside it does differs by
 * method: a write (every method but GET and HEAD) refuses it (`write-request-id.guard.ts`), a read
 * replaces it by a UUID. Declared inline on each operation, after its own parameters.
 */
import type { OpenAPIObject } from '@nestjs/swagger';
import { MAX_REQUEST_ID_LENGTH, REQUEST_ID_CHARACTERS, REQUEST_ID_RULE } from '../observability/request-id';

/** The JSON Schema of a request id the service uses as sent ({@link REQUEST_ID_RULE}). */
export const REQUEST_ID_SCHEMA = { type: 'string', minLength: 1, maxLength: MAX_REQUEST_ID_LENGTH, pattern: REQUEST_ID_CHARACTERS.source } as const;

const PURPOSE =
  "your id for this request: the answer's X-Request-Id header returns it, and the request's log line (req.id) is named by it; without one the service makes one (a UUID)";

/** The header parameter of a read (GET; HEAD too): an unusable id is replaced, never refused. */
export const READ_REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: `${PURPOSE}. It must be ${REQUEST_ID_RULE}, sent once; a read replaces any other value by a UUID (never refused)`,
  schema: REQUEST_ID_SCHEMA,
} as const;

/** The header parameter of a write (every method but GET and HEAD): an unusable id is refused, nothing written. */
export const WRITE_REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description:
    `${PURPOSE}; a compaction's decision, an erasure record and a policy event name the request by it (requestedBy.requestId, requestIdFrom client), and a DELETE resent with the same id (and API key) is recognised and answered as the erasure it resends, erasing nothing. ` +
    `It must be ${REQUEST_ID_RULE}, sent once: any other value (129 characters or more, a space, a character outside printable ASCII, empty, or the header on two lines) is refused with 400 validation_failed, parameter X-Request-Id, nothing written`,
  schema: REQUEST_ID_SCHEMA,
} as const;

/**
 * `document` with {@link READ_REQUEST_ID_PARAMETER} on every GET operation and
 * {@link WRITE_REQUEST_ID_PARAMETER} on every other one (a copy each, after the operation's own
 * parameters; an operation already declaring a header `X-Request-Id`, in any letter case, keeps its
 * own). Changes `document` in place and returns it.
 */
export function withRequestIdParameter(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, { parameters?: Array<Record<string, unknown>>; responses?: unknown }>)) {
      if (operation === null || typeof operation !== 'object' || !operation.responses) continue;
      const parameters = operation.parameters ?? [];
      if (parameters.some((p) => p.in === 'header' && typeof p.name === 'string' && p.name.toLowerCase() === 'x-request-id')) continue;
      const parameter = method === 'get' || method === 'head' ? READ_REQUEST_ID_PARAMETER : WRITE_REQUEST_ID_PARAMETER;
      operation.parameters = [...parameters, { ...parameter, schema: { ...parameter.schema } }];
    }
  }
  return document;
}
