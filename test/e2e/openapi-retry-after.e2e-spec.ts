/**
 * The OpenAPI document declares the `Retry-After` header where the service sends it: on every 429
 * (`rate_limited`, required) and on every 503 that may be `shutting_down` or `counting_timeout`
 * (optional there when the status has other codes, which carry none), as an integer of seconds;
 * and on no other status. Reads the document the running service serves.
 * Runtime: a few seconds (in-process service, SQLite).
 */
import { API_ERROR_CODES, type ApiErrorCode } from '../../apps/session-service/src/http/error-codes';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(30_000);

type Response = { headers?: Record<string, { required?: boolean; schema?: { type?: string } }>; content?: Record<string, { schema?: unknown }> };
type Operation = { responses: Record<string, Response> };

/** Every `code` enum value written anywhere in `schema`. */
function codesOf(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(codesOf);
  if (typeof schema !== 'object' || schema === null) return [];
  const record = schema as Record<string, unknown>;
  const own = (record.properties as { code?: { enum?: string[] } } | undefined)?.code?.enum ?? [];
  return [...own, ...Object.values(record).flatMap(codesOf)];
}

describe('Retry-After in the OpenAPI document', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService();
  });
  afterAll(async () => harness.stop());

  it('is declared on every status whose codes send it, required when all do, and nowhere else', async () => {
    const document = (await harness.http().get('/docs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, Operation>> };
    let declared = 0;
    let sawOptional = false;
    for (const [route, methods] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const codes = [...new Set(codesOf(response.content?.['application/json']?.schema))] as ApiErrorCode[];
          const sending = codes.filter((code) => code in API_ERROR_CODES && 'retryAfter' in API_ERROR_CODES[code]);
          const header = response.headers?.['Retry-After'];
          const where = `${method.toUpperCase()} ${route} ${status}`;
          if (sending.length === 0) {
            expect({ where, header }).toEqual({ where, header: undefined });
            continue;
          }
          declared++;
          expect({ where, type: header?.schema?.type, required: header?.required }).toEqual({
            where,
            type: 'integer',
            required: sending.length === codes.length,
          });
          if (!header?.required) sawOptional = true;
        }
      }
    }
    // Every /v1 route has a 429 and every route a 503 (shutting_down): many declarations, some optional.
    expect(declared).toBeGreaterThan(20);
    expect(sawOptional).toBe(true);
    const append = document.paths['/v1/sessions/{sessionId}/events'].post.responses;
    expect(append['429'].headers?.['Retry-After']).toMatchObject({ required: true });
    expect(append['503'].headers?.['Retry-After']).toMatchObject({ required: false });
  });
});
