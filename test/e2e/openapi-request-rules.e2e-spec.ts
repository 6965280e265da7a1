/**
 * The OpenAPI document's request schemas are as strict as the service (newcomer ncpolyglot A3): a
 * path `sessionId` carries the rule recall's `sessionId` filter carries (a value the document
 * allows is not refused with 400 `invalid_session_id`, one it refuses is), event and message ids
 * their lengths, and revision parameters their 64-bit range as text.
 */
import { useServedOpenApiDocument } from '../support/served-openapi-document';

jest.setTimeout(30_000);

type Schema = Record<string, unknown> & { pattern?: string; maxLength?: number; minLength?: number; anyOf?: Schema[] };
type Parameter = { in: string; name: string; schema: Schema };
type Document = { paths: Record<string, Record<string, { parameters?: Parameter[]; requestBody?: unknown }>>; components: { schemas: Record<string, Schema> } };

describe('request rules in the OpenAPI document', () => {
  const served = useServedOpenApiDocument<Document>();
  const harness = served.harness;

  it("declares every path sessionId with recall's sessionId rule, and the service agrees with it", async () => {
    const recall = served.document().paths['/v1/recall'].get.parameters!.find((p) => p.name === 'sessionId')!.schema;
    const paths = Object.entries(served.document().paths).flatMap(([path, methods]) =>
      Object.values(methods).flatMap((op) =>
        (op.parameters ?? []).filter((p) => p.in === 'path' && p.name === 'sessionId').map((p) => ({ path, schema: p.schema })),
      ),
    );
    expect(paths.length).toBeGreaterThan(10);
    for (const { path, schema } of paths) expect({ path, pattern: schema.pattern }).toEqual({ path, pattern: recall.pattern });
    const rule = new RegExp(paths[0].schema.pattern!, 'u');
    for (const [id, allowed] of [
      ['has space', false],
      ['..', false],
      ['x'.repeat(129), false],
      ['a:b@c.d_e-f', true],
    ] as const) {
      expect({ id, allowed: rule.test(id) }).toEqual({ id, allowed });
      const answer = await harness.http().get(`/v1/sessions/${encodeURIComponent(id)}/window`);
      expect({ id, status: answer.status, code: answer.body.code }).toEqual(
        allowed ? { id, status: 404, code: 'session_not_found' } : { id, status: 400, code: 'invalid_session_id' },
      );
    }
  });

  it('declares event and message ids 1 to 256 characters, as the service refuses a 257-character one', async () => {
    const ids: Schema[] = [];
    const walk = (node: unknown, key?: string): void => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n));
      if (node === null || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node)) {
        if (key === 'properties' && (k === 'id' || k === 'tool_call_id' || k === 'toolCallId')) ids.push(v as Schema);
        walk(v, k);
      }
    };
    walk(served.document().paths['/v1/sessions/{sessionId}/events'].post.requestBody);
    walk(served.document().components.schemas.OpenAiInputMessage);
    expect(ids.length).toBeGreaterThan(8);
    for (const id of ids) {
      const text = id.anyOf?.find((s) => s.type === 'string') ?? id;
      expect({ minLength: text.minLength, maxLength: text.maxLength }).toEqual({ minLength: 1, maxLength: 256 });
    }
    const refused = await harness
      .http()
      .post('/v1/sessions/ids/events')
      .send({ events: [{ id: 'x'.repeat(257), type: 'user', text: 'x' }] });
    expect(refused.status).toBe(400);
    await harness
      .http()
      .post('/v1/sessions/ids/events')
      .send({ events: [{ id: 'x'.repeat(256), type: 'user', text: 'x' }] })
      .expect(201);
  });

  it('declares revision parameters as 64-bit text past 2^53 − 1', () => {
    const atRevision = served.document().paths['/v1/sessions/{sessionId}/window'].get.parameters!.find((p) => p.name === 'atRevision')!.schema;
    const text = atRevision.anyOf!.find((s) => s.type === 'string')!;
    expect(text.maxLength).toBe('9223372036854775807'.length);
    expect(text.description).toMatch(/9223372036854775807/);
  });
});
