/**
 * The OpenAPI document declares the `X-Request-Id` request header the service takes on every route
 * (it declared the response header only, so a client generated from it had no typed way to send
 * one): an optional header parameter of every operation, its schema the rule the service applies
 * (a value the schema allows is used as sent: a read echoes it, a write runs under it; any other is
 * replaced by a UUID on a read and refused with 400 `validation_failed` on a write), and the typed
 * client sends it as a typed parameter.
 */
import fc from 'fast-check';
import { startListeningService, type ClientHarness } from '../support/client-harness';

jest.setTimeout(60_000);

type Schema = { type?: string; minLength?: number; maxLength?: number; pattern?: string };
type Parameter = { in: string; name: string; required?: boolean; description?: string; schema: Schema };
type Document = { paths: Record<string, Record<string, { parameters?: Parameter[]; responses?: unknown }>> };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the X-Request-Id request header in the OpenAPI document', () => {
  let harness: ClientHarness;
  let document: Document;
  beforeAll(async () => {
    harness = await startListeningService();
    const res = await fetch(`${harness.baseUrl}/docs/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as Document;
  });
  afterAll(async () => {
    await harness.stop();
  });

  /** Every operation of the document, with its X-Request-Id header parameters. */
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op !== null && typeof op === 'object' && op.responses)
        .map(([method, op]) => ({
          where: `${method.toUpperCase()} ${path}`,
          method,
          declared: (op.parameters ?? []).filter((p) => p.in === 'header' && p.name.toLowerCase() === 'x-request-id'),
        })),
    );

  it('is declared once on every operation: optional, 1 to 128 printable ASCII characters without spaces, described as refused on a write and replaced on a read', () => {
    const all = operations();
    expect(all.length).toBeGreaterThanOrEqual(15);
    expect(all.filter((o) => o.method !== 'get').length).toBeGreaterThanOrEqual(5);
    for (const { where, method, declared } of all) {
      expect({ where, count: declared.length }).toEqual({ where, count: 1 });
      const [parameter] = declared;
      expect({ where, name: parameter.name, required: parameter.required, schema: parameter.schema }).toEqual({
        where,
        name: 'X-Request-Id',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
      });
      expect({ where, description: parameter.description }).toEqual({
        where,
        description: expect.stringMatching(
          method === 'get'
            ? /answer's X-Request-Id header returns it.*a read replaces any other value by a UUID/
            : /refused with 400 validation_failed, parameter X-Request-Id, nothing written/,
        ),
      });
    }
  });

  it('property: the declared schema allows a value exactly when the service uses it as sent (a read echoes it, a write is not refused for it)', async () => {
    const [read] = operations().find((o) => o.where === 'GET /health')!.declared;
    const [write] = operations().find((o) => o.where === 'DELETE /v1/sessions/{sessionId}')!.declared;
    const allows = (schema: Schema, value: string) =>
      value.length >= schema.minLength! && value.length <= schema.maxLength! && new RegExp(schema.pattern!, 'u').test(value);
    // What Node's HTTP client sends as it is: printable ASCII, space and tab (not leading nor trailing: HTTP trims them), latin1 bytes.
    const character = fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
      fc.constantFrom(0x20, 0x09),
      fc.integer({ min: 0x80, max: 0xff }),
    );
    const value = fc.oneof(
      fc.array(character, { maxLength: 12 }),
      fc.array(character, { minLength: 120, maxLength: 136 }),
      fc.array(fc.integer({ min: 0x21, max: 0x7e }), { minLength: 126, maxLength: 130 }),
    );
    await fc.assert(
      fc.asyncProperty(
        value.map((codes) => String.fromCharCode(...codes)).filter((v) => !/^[ \t]|[ \t]$/.test(v)),
        async (id) => {
          const echoed = (await harness.http().get('/health').set('X-Request-Id', id)).headers['x-request-id'];
          expect({ id, echoed: echoed === id, allowed: allows(read.schema, id) }).toEqual({ id, echoed: echoed === id, allowed: echoed === id });
          if (echoed !== id) expect(echoed).toMatch(UUID);
          const erased = await harness.http().delete('/v1/sessions/never-written').set('X-Request-Id', id);
          const refused = erased.status === 400 && erased.body.code === 'validation_failed' && erased.body.parameter === 'X-Request-Id';
          expect({ id, refused, status: refused ? 400 : erased.status }).toEqual({ id, refused: !allows(write.schema, id), status: refused ? 400 : 404 });
        },
      ),
      { numRuns: 150, examples: [[''], ['x'.repeat(128)], ['x'.repeat(129)], ['has space'], ['caf\u00e9'], ['erase-7f3a']] },
    );
  });

  it('the typed client sends it as a header parameter, on a read and on a write, and the answer returns it', async () => {
    const client = harness.client();
    const health = await client.GET('/health', { params: { header: { 'X-Request-Id': 'typed-read-1' } } });
    expect([health.response.status, health.response.headers.get('x-request-id')]).toEqual([200, 'typed-read-1']);
    const appended = await client.POST('/v1/sessions/{sessionId}/events', {
      params: { path: { sessionId: 'typed-request-id' }, header: { 'X-Request-Id': 'typed-append-2' } },
      body: { events: [{ type: 'user', text: 'hello' }] },
    });
    expect([appended.response.status, appended.response.headers.get('x-request-id')]).toEqual([201, 'typed-append-2']);
    const refused = await client.DELETE('/v1/sessions/{sessionId}', {
      params: { path: { sessionId: 'typed-request-id' }, header: { 'X-Request-Id': 'x'.repeat(129) } },
    });
    expect([refused.response.status, refused.error?.code, refused.error?.parameter]).toEqual([400, 'validation_failed', 'X-Request-Id']);
  });
});
