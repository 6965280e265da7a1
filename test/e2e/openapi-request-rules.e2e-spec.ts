/**
 * The OpenAPI document's request schemas are as strict as the service (newcomer ncpolyglot A3): a
 * path `sessionId` carries the rule recall's `sessionId` filter carries (a value the document
 * allows is not refused with 400 `invalid_session_id`, one it refuses is), event and message ids
 * their lengths, and revision parameters their 64-bit range as text. The identity filters, and
 * only they, are declared non-empty, as the service refuses them empty.
 */
import { useServedOpenApiDocument } from '../support/served-openapi-document';

jest.setTimeout(30_000);

type Schema = Record<string, unknown> & { pattern?: string; maxLength?: number; minLength?: number; anyOf?: Schema[] };
type Parameter = { in: string; name: string; required?: boolean; description?: string; schema: Schema };
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

  // Newcomer F2: an identity filter left out widens a read to the whole tenant, so one sent empty is refused;
  // every other optional query parameter sent empty counts as absent (README "Empty query parameters").
  it('declares minLength 1 on exactly the identity filters, which the service refuses empty; it takes every other optional parameter empty as absent', async () => {
    const http = () => harness.http();
    await http()
      .post('/v1/sessions/rules-empty/events')
      .send({ events: [0, 1, 2].map((i) => ({ type: 'user', text: `zqempty ${i}` })), userId: 'u1' })
      .expect(201);
    const compaction = await http()
      .post('/v1/sessions/rules-empty/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      .expect(200);
    const paths: Record<string, string> = { sessionId: 'rules-empty', compactionId: (compaction.body as { compactionId: string }).compactionId };
    const identity: string[] = [];
    let others = 0;
    for (const [route, methods] of Object.entries(served.document().paths)) {
      const parameters = methods.get?.parameters ?? [];
      const url = route.replace(/\{(\w+)\}/g, (_, name: string) => paths[name]);
      const required = Object.fromEntries(parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, 'zqempty']));
      for (const p of parameters.filter((p) => p.in === 'query' && !p.required)) {
        const empty = await http().get(url).query(required).query(`${p.name}=`);
        if (p.schema.minLength === 1) {
          identity.push(`${route} ${p.name}`);
          expect({ route, name: p.name, status: empty.status, message: empty.body.message, description: p.description }).toEqual({
            route,
            name: p.name,
            status: 400,
            message: expect.stringMatching(new RegExp(`^${p.name}: is empty: give .*, or leave the parameter out to `)),
            description: expect.stringMatching(/not empty \(\w+= is refused, 400\): leave it out to /),
          });
        } else {
          others++;
          const absent = await http().get(url).query(required);
          expect({ route, name: p.name, status: empty.status, body: empty.body }).toEqual({ route, name: p.name, status: 200, body: absent.body });
        }
      }
    }
    expect(identity.sort()).toEqual(['/v1/recall compactionId', '/v1/recall sessionId', '/v1/recall userId', '/v1/sessions userId']);
    expect(others).toBeGreaterThan(25);
    // A client that validates requests against the document learns the rule the schemas cannot say (an empty `limit` fails its pattern).
    expect((served.document() as unknown as { info: { description: string } }).info.description).toMatch(
      /optional query parameter sent empty .* counts as absent, .* except the filters that name a session, user or compaction \(`sessionId`, `userId`, `compactionId`/,
    );
  });

  it('declares revision parameters as 64-bit text past 2^53 − 1', () => {
    const atRevision = served.document().paths['/v1/sessions/{sessionId}/window'].get.parameters!.find((p) => p.name === 'atRevision')!.schema;
    const text = atRevision.anyOf!.find((s) => s.type === 'string')!;
    expect(text.maxLength).toBe('9223372036854775807'.length);
    expect(text.description).toMatch(/9223372036854775807/);
  });
});
