/**
 * The OpenAPI document declares the response headers the service sends (newcomer ncpolyglot A1):
 * `X-Request-Id` on every response of every operation, and `X-RateLimit-Limit`, `-Remaining`,
 * `-Reset` on every response of the `/v1` operations; every `x-` header a real answer carries is
 * declared for its operation and status, and so are its browser-hardening headers and `Cache-Control`
 * (newcomer ncverify41 N1; helmet's legacy headers are not sent). Reads the document the running service serves.
 */
import { useServedOpenApiDocument } from '../support/served-openapi-document';

jest.setTimeout(30_000);

type Header = { $ref?: string; required?: boolean; schema?: { type?: string } };
type Operation = { responses: Record<string, { headers?: Record<string, Header> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components: { headers?: Record<string, Header> } };

describe('response headers in the OpenAPI document', () => {
  const served = useServedOpenApiDocument<Document>();
  const harness = served.harness;

  /** The declared headers of an operation's status, by lower-case name, `$ref`s resolved. */
  const declared = (path: string, method: string, status: number): Map<string, Header> => {
    const headers = served.document().paths[path][method].responses[String(status)]?.headers ?? {};
    return new Map(
      Object.entries(headers).map(([name, h]) => [name.toLowerCase(), h.$ref ? served.document().components.headers![h.$ref.split('/').pop()!] : h]),
    );
  };

  it('declares X-Request-Id (required) on every response, and the X-RateLimit-* headers (integers) on every /v1 response', () => {
    let responses = 0;
    for (const [path, methods] of Object.entries(served.document().paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const status of Object.keys(op.responses)) {
          const headers = declared(path, method, Number(status));
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect({ where, requestId: headers.get('x-request-id')?.required }).toEqual({ where, requestId: true });
          const limits = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((name) => headers.get(name)?.schema?.type);
          expect({ where, limits }).toEqual({ where, limits: path.startsWith('/v1/') ? ['integer', 'integer', 'integer'] : [undefined, undefined, undefined] });
          responses++;
        }
      }
    }
    expect(responses).toBeGreaterThan(100);
  });

  it.each([
    ['GET', '/v1/sessions', '/v1/sessions', 'get', 200],
    ['GET', '/v1/sessions/nope/window', '/v1/sessions/{sessionId}/window', 'get', 404],
    ['POST', '/v1/sessions/a1/events', '/v1/sessions/{sessionId}/events', 'post', 400],
    ['GET', '/health', '/health', 'get', 200],
  ])('every x- header of %s %s (%s %s) is declared for its status', async (method, url, path, op, status) => {
    const answer = method === 'GET' ? await harness.http().get(url) : await harness.http().post(url).send({ events: [] });
    expect(answer.status).toBe(status);
    const sent = Object.keys(answer.headers).filter((name) => name.startsWith('x-'));
    expect(sent).toContain('x-request-id');
    const headers = declared(path, op, status);
    expect(sent.filter((name) => !headers.has(name))).toEqual([]);
    // The browser-hardening headers and Cache-Control: sent, and declared (helmet's legacy x- headers are not sent at all).
    const hardening = [
      'content-security-policy',
      'x-frame-options',
      'x-content-type-options',
      'referrer-policy',
      'cross-origin-opener-policy',
      'cross-origin-resource-policy',
      'origin-agent-cluster',
      'cache-control',
    ];
    expect(hardening.filter((name) => answer.headers[name] === undefined)).toEqual([]);
    expect(hardening.filter((name) => !headers.has(name))).toEqual([]);
    expect(
      ['x-xss-protection', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-dns-prefetch-control'].filter((name) => name in answer.headers),
    ).toEqual([]);
    const enumOf = (name: string) => (headers.get(name)?.schema as { enum?: string[] } | undefined)?.enum;
    for (const name of ['x-frame-options', 'x-content-type-options', 'referrer-policy', 'cache-control'])
      expect({ name, sent: answer.headers[name], allowed: enumOf(name)?.includes(answer.headers[name]) }).toEqual({
        name,
        sent: answer.headers[name],
        allowed: true,
      });
  });

  // Answers given before any onRequest hook (Fastify's frameworkErrors) or on the socket by Node's
  // parser's refusal: they lacked X-Request-Id (invalid_path), the hardening headers and Cache-Control (newcomer ncopenapifuzz F1).
  it.each([
    ['a path that is not valid percent-encoded UTF-8 (/v1/sessions/%FF/window)', 400, 'invalid_path', '/v1/sessions/%FF/window'],
    ['an encoded lone surrogate in a path', 400, 'invalid_path', '/v1/sessions/%ED%A0%80'],
    ['a request line over Node’s limit (a 20,000-character session id)', 414, 'uri_too_long', `/v1/sessions/${'a'.repeat(20_000)}/window`],
  ])('%s answers %i %s with X-Request-Id, the hardening headers and Cache-Control: no-store', async (_case, status, code, url) => {
    const answer = await harness.http().get(url).set('X-Request-Id', 'early-answer-1');
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
    expect(answer.headers['x-request-id']).toBe('early-answer-1');
    expect(answer.headers['cache-control']).toBe('no-store');
    for (const name of ['content-security-policy', 'x-frame-options', 'x-content-type-options', 'referrer-policy', 'cross-origin-opener-policy'])
      expect({ name, sent: typeof answer.headers[name] }).toEqual({ name, sent: 'string' });
  });
});
